// `npm run bench:api -- --against <checkout>`: this checkout's server and another's (an earlier
// commit, say, with its `npm ci` done), both running at once with the worker idle, taking turns in
// short bursts of polls and then of creates. A host whose speed changes from minute to minute (a
// system call's cost swung twofold between runs a minute apart) then slows both alike, where whole
// runs one after another each get their own minutes. Prints each side's medians over the turns:
// the server's CPU per request, which the load generator's share of the cores does not move, and
// the rate; and their ratios.
import path from 'node:path';
import autocannon from 'autocannon';
import { ServerUnderTest, type LoadKind } from './service.ts';
import { fixed, median, printTable } from './stats.ts';

const burstSeconds = 1.5;

interface Side {
  name: string;
  server: ServerUnderTest;
  pollId: string;
  cpu: Record<LoadKind, number[]>;
  rate: Record<LoadKind, number[]>;
}

/** One burst of `kind` against a side: its server's CPU µs per request and the requests per second. */
async function burst(side: Side, kind: LoadKind, imageUrl: string, connections: number): Promise<{ cpu: number; rate: number }> {
  const { server } = side;
  const before = await server.report();
  const result = await autocannon({ connections, duration: burstSeconds, ...server.loadRequest(kind, side.pollId, imageUrl) });
  const after = await server.report();
  if (result.errors + result.timeouts + result.non2xx > 0) throw new Error(`${side.name}: ${kind} met errors or refusals`);
  return { cpu: (after.cpuMicros - before.cpuMicros) / result.requests.total, rate: result.requests.total / burstSeconds };
}

/**
 * `turns` bursts of each kind per side (after one unmeasured turn), each from `connections`
 * connections, the side that goes first alternating from turn to turn; the worker of each waits
 * on `holdUrl`, a download that never ends.
 */
export async function apiTurns(against: string, turns: number, holdUrl: string, connections: number): Promise<void> {
  const sides: Side[] = [];
  try {
    for (const [name, checkout] of [['this checkout', undefined], [path.basename(path.resolve(against)), against]] as const) {
      const server = await ServerUnderTest.start({}, {}, checkout);
      const side: Side = { name, server, pollId: '', cpu: { polls: [], creates: [] }, rate: { polls: [], creates: [] } };
      sides.push(side);
      side.pollId = await server.create(holdUrl);
    }
    process.stdout.write(`turns: ${turns} bursts of ${burstSeconds} s per side and kind, ${connections} connections… `);
    for (const kind of ['polls', 'creates'] as const) {
      for (let turn = 0; turn <= turns; turn++) {
        for (const side of turn % 2 === 0 ? sides : [...sides].reverse()) {
          const { cpu, rate } = await burst(side, kind, holdUrl, connections);
          if (turn === 0) continue;
          side.cpu[kind].push(cpu);
          side.rate[kind].push(rate);
        }
      }
    }
    console.log('done');
  } finally {
    await Promise.all(sides.map((side) => side.server.stop()));
  }
  const [mine, theirs] = sides as [Side, Side];
  const rows: string[][] = [];
  for (const kind of ['polls', 'creates'] as const) {
    for (const side of sides) rows.push([kind, side.name, fixed(median(side.cpu[kind])), fixed(median(side.rate[kind]))]);
    rows.push([kind, 'ratio', fixed(median(mine.cpu[kind]) / median(theirs.cpu[kind]), 3), fixed(median(mine.rate[kind]) / median(theirs.rate[kind]), 3)]);
  }
  console.log('Medians over the turns, the worker idle; ratio: this checkout / the other');
  printTable(['requests', 'checkout', 'server process CPU µs per request', 'requests/s'], rows);
}
