// npm run bench:queue — the queue's own cost and the cost of distribution, measured side by side.
//  1. Queue overhead per task (claim + heartbeat + complete, no work) with 3 claimer processes, on
//     SQLite and on PostgreSQL.
//  2. Correctness with 16 concurrent claimers on PostgreSQL: every task claimed exactly once.
//  3. Real-model throughput: the one-process default (`cutout serve`, SQLite) against one API
//     process + 3 `cutout worker` processes on PostgreSQL, same tasks, same machine.
// PostgreSQL comes from BENCH_POSTGRES_URL or CUTOUT_TEST_POSTGRES_URL (default: loopback).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import sharp from 'sharp';
import { createAccount } from '../src/store/accounts-repository.ts';
import { createApiKey } from '../src/store/api-keys-repository.ts';
import { openDatabase, type Db } from '../src/store/database.ts';
import { claimNextTask } from '../src/store/task-queue.ts';
import { createTask } from '../src/store/tasks-repository.ts';
import { startImageServer } from '../test/support/image-server.ts';
import { startCutout, type CutoutProcess } from '../test/support/processes.ts';

const execFileAsync = promisify(execFile);
const adminUrl = process.env.BENCH_POSTGRES_URL ?? process.env.CUTOUT_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const overheadTasks = Number(process.env.BENCH_QUEUE_TASKS ?? 600);
const modelTasks = Number(process.env.BENCH_MODEL_TASKS ?? 40);
const repo = path.resolve(import.meta.dirname, '..');
const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;

async function admin(query: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(query);
  } finally {
    await client.end();
  }
}

interface Store {
  label: string;
  dataDir: string;
  databaseUrl: string | undefined;
  drop(): Promise<void>;
}

async function freshStore(engine: 'sqlite' | 'postgres'): Promise<Store> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-bench-queue-'));
  if (engine === 'sqlite') return { label: 'SQLite', dataDir, databaseUrl: undefined, drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  const name = `cutout_bench_${randomBytes(5).toString('hex')}`;
  await admin(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    label: 'PostgreSQL',
    dataDir,
    databaseUrl: url.toString(),
    drop: async () => {
      await admin(`drop database if exists ${name} with (force)`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Tasks from `accounts` accounts, interleaved: with one account every ending queues on its balance row. */
async function fill(db: Db, count: number, accounts = 1): Promise<void> {
  const ids: string[] = [];
  for (let a = 0; a < accounts; a++) ids.push((await createAccount(db, { email: `bench-${a}-${Date.now()}@example.test`, plan: 'paid', credits: count })).id);
  for (let i = 0; i < count; i++) {
    await createTask(db, { accountId: ids[i % accounts] ?? '', input, idempotencyKey: undefined, maxActiveTasks: count }, Date.now() + i);
  }
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

async function queueOverhead(engine: 'sqlite' | 'postgres', claimers: number, accounts: number): Promise<{ meanMs: number; p50: number; p95: number; perSecond: number }> {
  const store = await freshStore(engine);
  try {
    const db = await openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, poolSize: 2 });
    await fill(db, overheadTasks, accounts);
    await db.destroy();
    const started = performance.now();
    const runs = await Promise.all(
      Array.from({ length: claimers }, () =>
        execFileAsync(process.execPath, ['--import', 'tsx', path.join(repo, 'bench/queue-claimer.ts'), store.dataDir, store.databaseUrl ?? ''], { cwd: repo }),
      ),
    );
    const wallMs = performance.now() - started;
    const times = runs.flatMap((r) => (JSON.parse(r.stdout.trim()) as { perTaskMs: number[] }).perTaskMs).sort((a, b) => a - b);
    if (times.length !== overheadTasks) throw new Error(`${times.length} of ${overheadTasks} tasks done`);
    return { meanMs: times.reduce((a, b) => a + b, 0) / times.length, p50: quantile(times, 0.5), p95: quantile(times, 0.95), perSecond: (times.length / wallMs) * 1000 };
  } finally {
    await store.drop();
  }
}

async function sixteenClaimers(): Promise<string> {
  const store = await freshStore('postgres');
  try {
    const db = await openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, poolSize: 16 });
    await fill(db, 320);
    const seen = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (;;) {
          const claimed = await claimNextTask(db, { leaseMs: 60_000, maxAttempts: 3 });
          if (!claimed) return;
          seen.set(claimed.task.id, (seen.get(claimed.task.id) ?? 0) + 1);
        }
      }),
    );
    const twice = [...seen.values()].filter((n) => n > 1).length;
    await db.destroy();
    if (seen.size !== 320 || twice > 0) throw new Error(`16 claimers: ${seen.size} of 320 claimed, ${twice} claimed twice`);
    return `320 tasks, 16 concurrent claimers: 320 claimed, 0 claimed twice`;
  } finally {
    await store.drop();
  }
}

async function modelThroughput(mode: 'one-process' | 'distributed'): Promise<{ perMinute: number; seconds: number }> {
  const store = await freshStore(mode === 'one-process' ? 'sqlite' : 'postgres');
  const tiny = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 180, g: 60, b: 60 } } }).png().toBuffer();
  const images = await startImageServer({ '/bench.png': (res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(tiny) });
  const procs: CutoutProcess[] = [];
  const env: Record<string, string> = {
    CUTOUT_DATA_DIR: store.dataDir,
    ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
    CUTOUT_BOOTSTRAP: 'false',
    CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: 'true',
    CUTOUT_RATE_LIMIT_PER_MINUTE: '1000000',
    CUTOUT_MAX_ACTIVE_TASKS: '100000',
    LOG_LEVEL: 'info',
  };
  try {
    const db = await openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, poolSize: 2 });
    const account = await createAccount(db, { email: 'bench@example.test', plan: 'paid', credits: modelTasks });
    const key = (await createApiKey(db, account.id, 'bench')).key;
    if (mode === 'one-process') procs.push(await startCutout('serve', ['serve'], env));
    else {
      procs.push(await startCutout('api', ['serve', '--no-worker'], env));
      // Three processes share the machine's cores: one inference thread each, polling briskly.
      const threads = String(Math.max(1, Math.floor(os.availableParallelism() / 3)));
      procs.push(...(await Promise.all([1, 2, 3].map((i) => startCutout(`worker-${i}`, ['worker'], { ...env, CUTOUT_INFERENCE_THREADS: threads, CUTOUT_WORKER_POLL_MS: '100' })))));
    }
    const api = procs[0]!;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: modelTasks }, () =>
        fetch(`${api.url}/api/v1/bg/removals`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ image_url: `${images.url}/bench.png` }),
        }).then((r) => {
          if (r.status !== 202) throw new Error(`create answered ${r.status}`);
        }),
      ),
    );
    for (;;) {
      const rows = await db.selectFrom('tasks').select(['status']).where('status', 'in', ['succeeded', 'failed']).execute();
      if (rows.length === modelTasks) {
        if (rows.some((r) => r.status !== 'succeeded')) throw new Error('a task failed');
        break;
      }
      await new Promise<void>((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    await db.destroy();
    return { perMinute: (modelTasks / seconds) * 60, seconds };
  } finally {
    await Promise.all(procs.map((p) => p.stop('SIGTERM')));
    await images.close();
    await store.drop();
  }
}

const fmt = (n: number, digits = 2): string => n.toFixed(digits);
console.log(`bench:queue on ${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => fmt(l, 1)).join(' ')} (other work on this machine skews every figure)`);
console.log(`\n1. Queue overhead per task (claim + heartbeat + complete, no work), ${overheadTasks} tasks`);
for (const [engine, claimers, accounts] of [['sqlite', 1, 1], ['postgres', 1, 1], ['sqlite', 3, 1], ['postgres', 3, 1], ['postgres', 3, 20]] as const) {
  const r = await queueOverhead(engine, claimers, accounts);
  console.log(`   ${engine.padEnd(9)} ${claimers} claimer process${claimers > 1 ? 'es' : '  '} ${String(accounts).padStart(2)} account${accounts > 1 ? 's' : ' '}  mean ${fmt(r.meanMs)} ms  p50 ${fmt(r.p50)} ms  p95 ${fmt(r.p95)} ms  ${fmt(r.perSecond, 0)} tasks/s  target < 5 ms: ${r.meanMs < 5 ? 'met' : 'MISSED'}`);
}
console.log('\n2. Claim correctness on PostgreSQL');
console.log(`   ${await sixteenClaimers()}`);
if (modelTasks > 0) {
  console.log(`\n3. Real-model throughput, ${modelTasks} tasks (64×48 PNG; the model always runs at 1024×1024)`);
  const single = await modelThroughput('one-process');
  console.log(`   one process (serve, SQLite, in-process worker)      ${fmt(single.perMinute, 1)} tasks/min (${fmt(single.seconds, 1)} s)`);
  const distributed = await modelThroughput('distributed');
  console.log(`   1 API + 3 worker processes (PostgreSQL)             ${fmt(distributed.perMinute, 1)} tasks/min (${fmt(distributed.seconds, 1)} s)`);
  const ratio = distributed.perMinute / single.perMinute;
  console.log(`   ratio distributed / one process: ${fmt(ratio)} (target ≥ 0.90: ${ratio >= 0.9 ? 'met' : 'MISSED'})`);
}
