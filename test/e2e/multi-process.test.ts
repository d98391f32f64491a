// The production shape on loopback: API processes and worker processes started as `cutout serve
// --no-worker` and `cutout worker`, sharing PostgreSQL and an S3-compatible bucket, running the
// real model. Needs PostgreSQL (CUTOUT_TEST_POSTGRES_URL); without it the suite is skipped and
// says so.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createAccount, findAccount, listLedger } from '../../src/store/accounts-repository.ts';
import { createApiKey } from '../../src/store/api-keys-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { createTestDatabase, postgresUrl, terminateConnections, type TestDatabase } from '../support/engines.ts';
import { startImageServer, type ImageServer } from '../support/image-server.ts';
import { startCutout, type CutoutProcess } from '../support/processes.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';

const taskCount = Number(process.env.CUTOUT_TEST_MULTIPROCESS_TASKS ?? 200);
/** Every process is given it, so the workers' metrics are read with it. */
const metricsToken = 'multi-process-metrics-token';
const finalStatuses = ['succeeded', 'failed'] as const;

describe('two API processes and three workers on PostgreSQL and a bucket (real model)', { skip: postgresUrl ? false : 'CUTOUT_TEST_POSTGRES_URL is not set: no PostgreSQL to run on' }, () => {
  let database: TestDatabase;
  let db: Db;
  let s3: S3Server;
  let images: ImageServer;
  let dataDir: string;
  let env: Record<string, string>;
  let apis: CutoutProcess[] = [];
  let workers: CutoutProcess[] = [];
  let key: string;
  let accountId: string;
  let tiny: Buffer;
  const held: http.ServerResponse[] = [];
  let holding = true;

  before(async () => {
    tiny = await sharp({ create: { width: 24, height: 16, channels: 3, background: { r: 200, g: 40, b: 40 } } }).png().toBuffer();
    const sendTiny = (res: http.ServerResponse): void => void res.writeHead(200, { 'content-type': 'image/png' }).end(tiny);
    images = await startImageServer({
      '/tiny.png': sendTiny,
      // Held until the test lets go, so a task can be caught mid-flight.
      '/slow.png': (res) => (holding ? held.push(res) : sendTiny(res)),
    });
    s3 = await startS3Server();
    database = await createTestDatabase();
    db = await openDatabase({ dataDir: '', databaseUrl: database.url, poolSize: 4 });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-multi-'));
    env = {
      ...s3.env,
      DATABASE_URL: database.url,
      CUTOUT_DATA_DIR: dataDir,
      CUTOUT_SIGNING_SECRET: 'multi-process-test-secret-0123456789',
      CUTOUT_BOOTSTRAP: 'false',
      CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: 'true',
      CUTOUT_RATE_LIMIT_PER_MINUTE: '1000000',
      CUTOUT_MAX_ACTIVE_TASKS: '100000',
      CUTOUT_WORKER_POLL_MS: '100',
      CUTOUT_INFERENCE_THREADS: '1',
      CUTOUT_FETCH_TIMEOUT_SECONDS: '60',
      CUTOUT_METRICS_TOKEN: metricsToken,
    };
    const account = await createAccount(db, { email: 'multi@example.test', plan: 'paid', credits: taskCount + 20 });
    accountId = account.id;
    key = (await createApiKey(db, accountId, 'multi')).key;
    apis = await Promise.all([startCutout('api-1', ['serve', '--no-worker'], env), startCutout('api-2', ['serve', '--no-worker'], env)]);
  });

  after(async () => {
    holding = false;
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'image/png' }).end(tiny);
    await Promise.all([...apis, ...workers].map((p) => p.stop('SIGKILL')));
    await db.destroy();
    await database.drop();
    await images.close();
    await s3.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const startWorkers = async (count: number, extra: Record<string, string> = {}): Promise<CutoutProcess[]> => {
    const started = await Promise.all(Array.from({ length: count }, (_, i) => startCutout(`worker-${workers.length + i + 1}`, ['worker'], { ...env, ...extra })));
    workers.push(...started);
    return started;
  };

  async function create(api: CutoutProcess, image = 'tiny.png'): Promise<string> {
    const res = await fetch(`${api.url}/api/v1/bg/removals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ image_url: `${images.url}/${image}` }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    return ((await res.json()) as { id: string }).id;
  }

  async function getTask(api: CutoutProcess, id: string): Promise<{ status: string; output: { url: string | null } | null }> {
    const res = await fetch(`${api.url}/api/v1/bg/removals/${id}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    return (await res.json()) as { status: string; output: { url: string | null } | null };
  }

  async function waitUntilFinal(ids: string[], deadlineMs: number): Promise<void> {
    const until = Date.now() + deadlineMs;
    for (;;) {
      const done = await db.selectFrom('tasks').select('id').where('id', 'in', ids).where('status', 'in', [...finalStatuses]).execute();
      if (done.length === ids.length) return;
      if (Date.now() > until) throw new Error(`${ids.length - done.length} of ${ids.length} tasks still not final after ${deadlineMs} ms`);
      await new Promise<void>((resolve) => setTimeout(resolve, 250));
    }
  }

  async function assertChargedOnce(ids: string[]): Promise<void> {
    const tasks = await db.selectFrom('tasks').select(['id', 'status', 'attempts', 'error_code', 'error_message']).where('id', 'in', ids).execute();
    assert.deepEqual(tasks.filter((t) => t.status !== 'succeeded'), [], 'every task succeeded');
    const ledger = (await listLedger(db, accountId)).filter((e) => e.taskId !== null && ids.includes(e.taskId));
    for (const id of ids) {
      assert.deepEqual(ledger.filter((e) => e.taskId === id).map((e) => e.kind), ['reserve', 'charge'], `ledger of ${id}`);
    }
  }

  const claimsOf = (id: string): number => workers.flatMap((w) => w.logs).filter((l) => l.msg === 'task claimed' && l.taskId === id).length;

  test('with every worker down the APIs keep answering and tasks stay queued; they finish once workers start', async () => {
    const ids = [await create(apis[0]!), await create(apis[1]!)];
    for (const api of apis) {
      assert.equal((await fetch(`${api.url}/readyz`)).status, 200);
      for (const id of ids) assert.equal((await getTask(api, id)).status, 'queued');
    }
    await startWorkers(3);
    await waitUntilFinal(ids, 300_000);
    await assertChargedOnce(ids);
    for (const worker of workers) {
      const ready = (await (await fetch(`${worker.url}/readyz`)).json()) as { checks: Record<string, string> };
      assert.deepEqual(ready.checks, { database: 'ok', storage: 'ok', model: 'ok' });
      assert.equal((await fetch(`${worker.url}/metrics`)).status, 401, "a worker's metrics need the token too");
    }
  });

  // Every task runs the real model; on two cores 200 of them take minutes, beyond the suite's
  // default per-test timeout.
  test(`${taskCount} tasks created through both APIs are each claimed once, charged once, and all succeed`, { timeout: 30 * 60_000 }, async (t) => {
    const started = Date.now();
    const ids: string[] = [];
    for (let batch = 0; batch < taskCount; batch += 20) {
      const size = Math.min(20, taskCount - batch);
      ids.push(...(await Promise.all(Array.from({ length: size }, (_, i) => create(apis[(batch + i) % 2]!)))));
    }
    await waitUntilFinal(ids, 29 * 60_000);
    t.diagnostic(`${ids.length} tasks through 2 APIs and 3 workers in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await assertChargedOnce(ids);
    for (const id of ids) assert.equal(claimsOf(id), 1, `task ${id} claimed once`);
    const attempts = await db.selectFrom('tasks').select('attempts').where('id', 'in', ids).execute();
    assert.ok(attempts.every((t) => Number(t.attempts) === 1));
    const busyWorkers = workers.filter((w) => w.logs.some((l) => l.msg === 'task claimed' && ids.includes(l.taskId ?? '')));
    assert.equal(busyWorkers.length, 3, 'all three workers took part');
    // The bucket serves the result through the URL either API hands out.
    const { output } = await getTask(apis[1]!, ids[0]!);
    const download = await fetch(output?.url ?? '');
    assert.equal(download.status, 200);
    assert.equal((await sharp(Buffer.from(await download.arrayBuffer())).metadata()).width, 24);
    // Each worker's metrics count its own charges; together they are every credit charged.
    let charged = 0;
    for (const worker of workers) {
      const text = await (await fetch(`${worker.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
      charged += Number(/^cutout_credits_charged_total (\d+)/m.exec(text)?.[1] ?? 0);
    }
    assert.equal(charged, ids.length + 2);
    const account = await findAccount(db, accountId);
    assert.equal(account?.creditsReserved, 0);
  });

  test('workers whose database connections are cut keep going: every task still succeeds and is charged once', async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => create(apis[i % 2]!)));
    // Cut every connection to the database (APIs and workers) again and again while they work.
    let cuts = 0;
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      cuts += await terminateConnections(database.url);
      await new Promise<void>((resolve) => setTimeout(resolve, 150));
    }
    assert.ok(cuts > 0, 'connections were cut');
    await waitUntilFinal(ids, 300_000);
    await assertChargedOnce(ids);
    // And the APIs answer on fresh connections.
    for (const api of apis) assert.equal((await getTask(api, ids[0]!)).status, 'succeeded');
  });

  test('SIGTERM: a worker stops claiming, finishes its task within the grace period, and exits 0', async () => {
    const id = await create(apis[0]!, 'slow.png');
    const holder = await Promise.race(workers.map((w) => w.waitForLog((l) => l.msg === 'task claimed' && l.taskId === id).then(() => w)));
    const others = workers.filter((w) => w !== holder);
    // The idle workers stop at once; the busy one waits for its task.
    await Promise.all(others.map(async (w) => assert.equal(await w.stop('SIGTERM'), 0)));
    holder.child.kill('SIGTERM');
    await holder.waitForLog((l) => l.msg === 'shutting down');
    holding = false;
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'image/png' }).end(tiny);
    assert.equal(await holder.exited, 0);
    await assertChargedOnce([id]);
    holding = true;
  });

  test('SIGTERM past the grace period releases the task, and SIGKILL mid-task is taken over after the lease; charged once', async () => {
    const [graceless] = await startWorkers(1, { CUTOUT_SHUTDOWN_GRACE_SECONDS: '0' });
    const id = await create(apis[1]!, 'slow.png');
    await graceless!.waitForLog((l) => l.msg === 'task claimed' && l.taskId === id);
    assert.equal(await graceless!.stop('SIGTERM'), 0);
    const released = await db.selectFrom('tasks').select(['status', 'attempts']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual({ status: released.status, attempts: Number(released.attempts) }, { status: 'queued', attempts: 0 });

    // A worker with a short lease claims it and is killed outright mid-task.
    const [victim] = await startWorkers(1, { CUTOUT_LEASE_SECONDS: '5' });
    await victim!.waitForLog((l) => l.msg === 'task claimed' && l.taskId === id);
    assert.equal(await victim!.stop('SIGKILL'), 'SIGKILL');
    const [rescuer] = await startWorkers(1);
    const takeover = await rescuer!.waitForLog((l) => l.msg === 'task claimed' && l.taskId === id, 60_000);
    assert.equal(takeover.attempt, 2);
    holding = false;
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'image/png' }).end(tiny);
    await waitUntilFinal([id], 300_000);
    await assertChargedOnce([id]);
  });
});
