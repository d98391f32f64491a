// `npm run bench:api`: autocannon against the real service (SQLite, in-process worker) on loopback.
// Two phases, each on a fresh server: `idle` (the worker waits on a download that never arrives, so no
// inference runs) and `busy` (the worker runs inference on a 2 MP photo the whole time). Each phase
// measures polls, then creates, and the server's event-loop delay while the polls run; with the
// worker idle, also the server's own CPU per request of each kind, steadier than the rates, which
// move with the load generator's share of the cores.
// Bounded: each load run stops after its duration or its request cap, whichever comes first.
// `--against <checkout>` compares this checkout's API with another's, taking turns (api-turns.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { z } from 'zod';
import { apiTurns } from './api-turns.ts';
import { describeHost, measureHost } from './host.ts';
import { benchImages } from './images.ts';
import { ServerUnderTest, startImageServer, untilDeadline } from './service.ts';
import { fixed, printTable } from './stats.ts';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, against: { type: 'string' }, turns: { type: 'string', default: '10' } } });
const quick = values.quick;
/** `--against <checkout>`: instead of the two phases, this checkout's API and that one's taking turns (api-turns.ts). */
const against = z
  .string()
  .refine((dir) => fs.existsSync(path.join(dir, 'bench/api-server.ts')), 'no bench/api-server.ts in the checkout --against names')
  .optional()
  .parse(values.against);
const turns = z.coerce.number().int().min(1).max(100).parse(values.turns);
const seconds = quick ? 5 : 10;
const maxRequests = 200_000;
const connections = 10;

interface Load {
  perSecond: number;
  total: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(opts: autocannon.Options): Promise<Load> {
  // `amount` would override `duration`; `maxOverallRequests` caps the count alongside it.
  const result = await autocannon({ connections, duration: seconds, maxOverallRequests: maxRequests, ...opts });
  const errors = result.errors + result.timeouts + result.non2xx;
  return { perSecond: result.requests.average, total: result.requests.total, p50: result.latency.p50, p99: result.latency.p99, errors };
}

async function phase(name: 'idle' | 'busy', imageUrl: string) {
  const server = await ServerUnderTest.start();
  try {
    const pollId = await server.create(imageUrl);
    if (name === 'busy') {
      // Enough queued work to keep the worker in inference for the whole phase.
      for (let i = 0; i < 4 * seconds; i++) await server.create(imageUrl);
      await untilDeadline(async () => ((await server.report()).tasks.succeeded ?? 0) >= 1, 120_000, 'the first inference');
    }
    server.send({ kind: 'reset' });
    const beforePolls = await server.report();
    const polls = await load(server.loadRequest('polls', pollId, imageUrl));
    const duringPolls = await server.report();
    const cpuPerPoll = (duringPolls.cpuMicros - beforePolls.cpuMicros) / polls.total;
    const beforeCreates = await server.report();
    const creates = await load(server.loadRequest('creates', pollId, imageUrl));
    const end = await server.report();
    const cpuPerCreate = (end.cpuMicros - beforeCreates.cpuMicros) / creates.total;
    return { name, polls, creates, cpuPerPoll, cpuPerCreate, delay: duringPolls.eventLoopDelayMs, tasks: end.tasks };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const photo = (await benchImages()).find((i) => i.group === '2 MP')!;
  const images = await startImageServer([fs.readFileSync(photo.file)]);
  const runs = against ? `this checkout and ${against} taking turns` : `${seconds} s or ${maxRequests} requests per run`;
  console.log(`cutout bench:api${quick ? ' --quick' : ''}: ${os.cpus().length} cores, node ${process.version}; autocannon, ${connections} connections, ` +
    `${runs}; SQLite; server and load generator share the machine`);
  console.log(`${describeHost(await measureHost())}\n`);
  try {
    if (against) return await apiTurns(against, turns, `${images.origin}/hold`, connections);
    const results = [];
    for (const [name, url] of [['idle', `${images.origin}/hold`], ['busy', `${images.origin}/photo/0`]] as const) {
      results.push(await phase(name, url));
      console.log(`${name}: ${JSON.stringify(results.at(-1))}`);
    }
    printTable(
      ['worker', 'creates/s', 'create p50 / p99 ms', 'server process CPU µs per create', 'polls/s', 'poll p50 / p99 ms', 'server process CPU µs per poll', 'event-loop delay during polls p50 / p99 / max ms', 'errors', 'tasks at end'],
      results.map((r) => [
        r.name,
        fixed(r.creates.perSecond),
        `${r.creates.p50} / ${r.creates.p99}`,
        r.name === 'idle' ? fixed(r.cpuPerCreate) : '– (inference shares it)',
        fixed(r.polls.perSecond),
        `${r.polls.p50} / ${r.polls.p99}`,
        r.name === 'idle' ? fixed(r.cpuPerPoll) : '– (inference shares it)',
        `${fixed(r.delay.p50, 1)} / ${fixed(r.delay.p99, 1)} / ${fixed(r.delay.max, 1)}`,
        String(r.creates.errors + r.polls.errors),
        Object.entries(r.tasks).map(([k, v]) => `${k} ${v}`).join(', '),
      ]),
    );
    console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await images.close();
  }
}

await main();
