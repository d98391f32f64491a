import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { openResults } from '../../src/storage/open-results.ts';
import { createAccount, listLedger } from '../../src/store/accounts-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { createTask, findTask } from '../../src/store/tasks-repository.ts';
import { createSourceReader } from '../../src/worker/task-source.ts';
import { StoreUnavailableError } from '../../src/domain/errors.ts';
import { newUploadKey } from '../../src/storage/upload-store.ts';
import { recordTaskSource } from '../../src/store/web-tasks-repository.ts';
import { DiskResultStore } from '../../src/storage/disk-result-store.ts';
import { createTaskProcessor } from '../../src/worker/process-task.ts';
import { Worker } from '../../src/worker/worker.ts';
import { fixtureImage, startImageServer, type ImageServer } from '../support/image-server.ts';
import { openTestStore } from '../support/engines.ts';
import { startS3Server } from '../support/s3-server.ts';
import { startTcpGate } from '../support/tcp-gate.ts';

let dataDir: string;
let db: Db;
let images: ImageServer;

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-task-source-'));
  db = await openDatabase({ dataDir });
  images = await startImageServer();
});

after(async () => {
  await db.destroy();
  await images.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test("a database failure while a task's source is looked up is retried: the task's image is still read", async () => {
  const config = loadConfig({ CUTOUT_DATA_DIR: dataDir, CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: 'true', CUTOUT_BOOTSTRAP: 'false' });
  const account = await createAccount(db, { email: 'source@example.test', plan: 'paid', credits: 5 });
  const { task } = await createTask(db, {
    accountId: account.id,
    input: { image_url: `${images.url}/fixtures/horse-279.png`, subject: 'auto', precision: 'standard', output_format: 'png' },
    idempotencyKey: undefined,
    maxActiveTasks: 10,
  });
  // The lookup's table is out of reach for the first attempt, as in an outage, and back before the retry.
  await sql`alter table web_task_sources rename to web_task_sources_away`.execute(db);
  const failures: unknown[] = [];
  let restored: Promise<unknown> | undefined;
  const read = createSourceReader(config, db, openResults(config).uploads, (err) => {
    failures.push(err);
    restored ??= sql`alter table web_task_sources_away rename to web_task_sources`.execute(db);
  });
  const data = await read(task);
  await restored;
  assert.equal(failures.length, 1);
  assert.match(String(failures[0]), /web_task_sources/);
  assert.deepEqual(data, fixtureImage('horse-279.png'));
});

test("an upload whose store does not answer is read once the store is back; a store that stays away ends the attempt, not the task", async () => {
  const s3 = await startS3Server();
  const gate = await startTcpGate(Number(new URL(s3.endpoint).port));
  const config = loadConfig({ CUTOUT_DATA_DIR: dataDir, CUTOUT_BOOTSTRAP: 'false', CUTOUT_LEASE_SECONDS: '5', ...s3.env, CUTOUT_S3_ENDPOINT: `http://127.0.0.1:${gate.port}` });
  const results = openResults(config);
  try {
    const account = await createAccount(db, { email: 'upload-outage@example.test', plan: 'paid', credits: 5 });
    const uploadKey = newUploadKey();
    await results.uploads.put(uploadKey, fixtureImage('horse-279.png'));
    const { task } = await createTask(db, {
      accountId: account.id,
      input: { image_url: `${config.publicUrl ?? 'http://localhost'}/app/uploads/${uploadKey}`, subject: 'auto', precision: 'standard', output_format: 'png' },
      idempotencyKey: undefined,
      maxActiveTasks: 10,
    });
    await db.transaction().execute((tx) => recordTaskSource(tx, task.id, { uploadKey, maxPixels: null }));
    gate.shut();
    const failures: unknown[] = [];
    const read = createSourceReader(config, db, results.uploads, (err) => {
      failures.push(err);
      gate.open();
    });
    assert.deepEqual(await read(task), fixtureImage('horse-279.png'));
    assert.equal(failures.length, 1);

    gate.shut();
    await assert.rejects(createSourceReader(config, db, results.uploads)(task), StoreUnavailableError);
  } finally {
    results.close();
    await gate.close();
    await s3.close();
  }
});

test('an upload whose bucket stalls mid-body ends the attempt like an outage, within the lease, instead of holding the task', { timeout: 30_000 }, async () => {
  // A bucket that answers every read with headers and the start of a body it never finishes.
  const stalling = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '100000' });
    response.write(Buffer.alloc(1000));
  });
  await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`;
  const config = loadConfig({
    CUTOUT_DATA_DIR: dataDir,
    CUTOUT_BOOTSTRAP: 'false',
    CUTOUT_LEASE_SECONDS: '5',
    CUTOUT_S3_BUCKET: 'stalls',
    CUTOUT_S3_ENDPOINT: endpoint,
    CUTOUT_S3_TIMEOUT_SECONDS: '1',
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
  });
  const results = openResults(config);
  try {
    const account = await createAccount(db, { email: 'upload-stall@example.test', plan: 'paid', credits: 5 });
    const uploadKey = newUploadKey();
    const { task } = await createTask(db, {
      accountId: account.id,
      input: { image_url: `http://localhost/app/uploads/${uploadKey}`, subject: 'auto', precision: 'standard', output_format: 'png' },
      idempotencyKey: undefined,
      maxActiveTasks: 10,
    });
    await db.transaction().execute((tx) => recordTaskSource(tx, task.id, { uploadKey, maxPixels: null }));
    const failures: unknown[] = [];
    const started = Date.now();
    await assert.rejects(
      createSourceReader(config, db, results.uploads, (err) => failures.push(err))(task),
      (err: unknown) => err instanceof StoreUnavailableError && /did not send the object within 1000 ms/.test(err.message),
    );
    assert.ok(Date.now() - started < config.leaseMs + 2000, `ended after ${Date.now() - started} ms`);
    assert.ok(failures.length >= 1, 'each stalled read ended and was tried again');
  } finally {
    results.close();
    stalling.closeAllConnections();
    await new Promise((resolve) => stalling.close(resolve));
  }
});

test("a database that stays away past the lease while a task's source is looked up ends the attempt, not the task", async () => {
  // A store of its own: the task the first test left queued would be claimed first.
  const own = await openTestStore('sqlite');
  try {
    const config = loadConfig({ CUTOUT_DATA_DIR: own.dataDir, CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: 'true', CUTOUT_BOOTSTRAP: 'false', CUTOUT_LEASE_SECONDS: '5' });
    const account = await createAccount(own.db, { email: 'source-outage@example.test', plan: 'paid', credits: 5 });
    const { task } = await createTask(own.db, {
      accountId: account.id,
      input: { image_url: `${images.url}/fixtures/horse-279.png`, subject: 'auto', precision: 'standard', output_format: 'png' },
      idempotencyKey: undefined,
      maxActiveTasks: 10,
    });
    const results = new DiskResultStore(path.join(own.dataDir, 'results'));
    const stores = openResults(config);
    const noModel = { predict: () => Promise.reject(new Error('no source was read, so no model pass is made')) };
    const worker = new Worker({
      db: own.db,
      logger: pino({ level: 'silent' }),
      process: createTaskProcessor(config, noModel, results, createSourceReader(config, own.db, stores.uploads)),
      results,
      concurrency: 1,
      leaseMs: config.leaseMs,
      maxAttempts: 3,
    });
    // Out of reach for the lookup's retries, a lease long; the task's ending uses other tables.
    await sql`alter table web_task_sources rename to web_task_sources_away`.execute(own.db);
    assert.equal(await worker.runOnce(), true);
    const after = await findTask(own.db, task.id);
    assert.deepEqual({ status: after?.status, attempts: after?.attempts, error: after?.error_code }, { status: 'queued', attempts: 1, error: null });
    assert.deepEqual((await listLedger(own.db, account.id)).filter((e) => e.taskId === task.id).map((e) => e.kind), ['reserve']);
    stores.close();
  } finally {
    await own.close();
  }
});
