// The server under test for `npm run bench:api`: the real service (API + in-process worker, SQLite)
// on a loopback port in its own process, with one funded account. It reports its event-loop delay
// and task counts to the parent on request.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { createAccount } from '../src/store/accounts-repository.ts';
import { createApiKey } from '../src/store/api-keys-repository.ts';
import { benchDataDir } from './images.ts';

export type ServerMessage =
  | { kind: 'ready'; url: string; key: string }
  | { kind: 'report'; eventLoopDelayMs: { p50: number; p99: number; max: number }; tasks: Record<string, number>; rssMb: number; peakRssMb: number; cpuMicros: number; minorPageFaults: number };
export type ParentMessage = { kind: 'reset' } | { kind: 'report' } | { kind: 'stop' };

/** Settings the parent chooses for this run (worker concurrency, threads), as environment variables. */
const overrides = JSON.parse(process.argv[2] ?? '{}') as Record<string, string>;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-bench-api-'));
// The optimised graph is shared with the other benches' data folder, so it is built only once.
fs.mkdirSync(path.join(benchDataDir, 'models'), { recursive: true });
fs.symlinkSync(path.join(benchDataDir, 'models'), path.join(dataDir, 'models'));
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  CUTOUT_DATA_DIR: dataDir,
  CUTOUT_BOOTSTRAP: 'false',
  // The bench's image server is on loopback.
  CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: 'true',
  // The bench measures the API, not the per-key limits, which would refuse almost all of its requests.
  CUTOUT_RATE_LIMIT_PER_MINUTE: '1000000000',
  CUTOUT_MAX_ACTIVE_TASKS: '1000000000',
  ...overrides,
});
const server = await startServer(config, { logger: pino({ level: 'silent' }), print: () => {} });
const account = await createAccount(server.db, { email: 'bench@example.test', plan: 'paid', credits: 100_000_000 });
const { key } = await createApiKey(server.db, account.id, 'bench');

const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
const send = (message: ServerMessage): void => void process.send?.(message);

process.on('message', async (message: ParentMessage) => {
  if (message.kind === 'reset') delay.reset();
  if (message.kind === 'report') {
    const rows = await server.db.selectFrom('tasks').select(['status']).select((eb) => eb.fn.countAll<number>().as('n')).groupBy('status').execute();
    const ms = (ns: number): number => ns / 1e6;
    const cpu = process.cpuUsage();
    const usage = process.resourceUsage();
    send({
      kind: 'report',
      eventLoopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      tasks: Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])),
      rssMb: process.memoryUsage.rss() / 2 ** 20,
      peakRssMb: usage.maxRSS / 1024,
      cpuMicros: cpu.user + cpu.system,
      minorPageFaults: usage.minorPageFault,
    });
  }
  if (message.kind === 'stop') {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  }
});
send({ kind: 'ready', url: server.url, key });
