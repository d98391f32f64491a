// Retention against a bucket that accepts connections and never answers: a sweep ends at the first
// delete that meets the outage (within CUTOUT_S3_TIMEOUT_SECONDS), says so once, and leaves every
// file not yet deleted recorded, so the next sweep, with the bucket back, deletes them all.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import pino from 'pino';
import type { S3Config } from '../../src/config.ts';
import { createAccount } from '../../src/store/accounts-repository.ts';
import { claimNextTask, completeTask, failTask } from '../../src/store/task-queue.ts';
import { createTask, findTask } from '../../src/store/tasks-repository.ts';
import { recordPendingUpload } from '../../src/store/pending-uploads-repository.ts';
import { findTaskSource, recordTaskSource } from '../../src/store/web-tasks-repository.ts';
import { resultKey } from '../../src/storage/result-store.ts';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
import { S3UploadStore } from '../../src/storage/s3-upload-store.ts';
import { newUploadKey } from '../../src/storage/upload-store.ts';
import { runWebMaintenance, type WebMaintenanceDone } from '../../src/web/web-maintenance.ts';
import { Maintenance } from '../../src/worker/maintenance.ts';
import { openTestStore } from '../support/engines.ts';
import { LogCollector } from '../support/log-collector.ts';
import { s3ConfigFor, startS3Server, type S3Server } from '../support/s3-server.ts';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;
const lease = { leaseMs: 60_000, maxAttempts: 3 };
const hourMs = 3_600_000;
// Long enough that the 2.5 timeouts a sweep may take leave a loaded machine room, and short of the
// three attempts (3 timeouts) that one delete took without its deadline.
const timeoutMs = 2000;
// More than the sweep deletes at once (8), so that a sweep that went on would meet the outage again and again.
const files = 40;

const configFor = (endpoint: string, bucket: string): S3Config => s3ConfigFor(endpoint, bucket, { prefix: '', timeoutMs });

let store: Awaited<ReturnType<typeof openTestStore>>;
let s3: S3Server;
let gate: TcpGate;
/** Stores the files straight into the bucket; the sweeps reach it through the gate. */
let direct: S3ResultStore;
before(async () => {
  store = await openTestStore('sqlite');
  s3 = await startS3Server();
  gate = await startTcpGate(Number(new URL(s3.endpoint).port));
  direct = new S3ResultStore(configFor(s3.endpoint, s3.bucket), 900);
});
after(async () => {
  direct.close();
  await gate.close();
  await s3.close();
  await store.close();
});

/** A store whose client has no connection open yet, so that all of its requests meet the gate as it is now. */
function behindGate(): S3ResultStore {
  return new S3ResultStore(configFor(`http://127.0.0.1:${gate.port}`, s3.bucket), 900);
}

async function stored(objectKey: string): Promise<boolean> {
  try {
    await direct.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: objectKey }));
    return true;
  } catch {
    return false;
  }
}

async function expiredTasks(count: number, withTask: (claimed: { taskId: string; claim: number; leaseToken: string }, at: number) => Promise<void>): Promise<string[]> {
  const at = Date.now() - 48 * hourMs;
  const account = await createAccount(store.db, { email: `o-${Math.random()}@example.test`, plan: 'paid', credits: count });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { task } = await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: count }, at);
    const claimed = await claimNextTask(store.db, lease, at);
    assert.equal(claimed?.task.id, task.id);
    await withTask({ taskId: task.id, claim: claimed.task.claims, leaseToken: claimed.leaseToken }, at);
    ids.push(task.id);
  }
  return ids;
}

/** Failed web tasks past retention, each with its upload stored in the bucket. */
async function expiredUploads(count: number): Promise<{ ids: string[]; uploadKeys: string[] }> {
  const uploadKeys: string[] = [];
  const uploadsDirect = new S3UploadStore(direct.client, configFor(s3.endpoint, s3.bucket));
  const ids = await expiredTasks(count, async ({ taskId, leaseToken }, at) => {
    const uploadKey = newUploadKey();
    await uploadsDirect.put(uploadKey, Buffer.from('source image'));
    uploadKeys.push(uploadKey);
    await recordTaskSource(store.db, taskId, { uploadKey, maxPixels: null }, at);
    assert.ok(await failTask(store.db, taskId, leaseToken, { code: 'processing_failed', message: 'failed' }, at));
  });
  return { ids, uploadKeys };
}

test('a retention sweep facing a bucket that never answers ends within the store timeout, logs it once, and the next sweep deletes every file', { timeout: 60_000 }, async () => {
  const keys: string[] = [];
  const ids = await expiredTasks(files, async ({ taskId, claim, leaseToken }, at) => {
    const key = resultKey(taskId, claim, 'png');
    await direct.put(key, Buffer.from(key));
    keys.push(key);
    assert.ok(await completeTask(store.db, taskId, leaseToken, { key, width: 1, height: 1 }, at));
  });
  const log = new LogCollector();
  gate.silence();
  const results = behindGate();
  try {
    const started = Date.now();
    const done = await new Maintenance(store.db, results, { resultRetentionHours: 24, idempotencyTtlHours: 24 }, pino({ level: 'warn' }, log.stream)).run();
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 2.5 * timeoutMs, `the sweep took ${elapsed} ms`);
    assert.equal(done.resultsDeleted, 0);
    assert.equal(log.entries.length, 1, JSON.stringify(log.entries.map((e) => e.msg)));
    assert.match(log.entries[0]!.msg, /^The bucket failed; .*next sweep/);
    for (const id of ids) assert.equal((await findTask(store.db, id))?.result_deleted_at, null, 'not marked deleted while its file may be stored');

    gate.open();
    assert.equal((await new Maintenance(store.db, results, { resultRetentionHours: 24, idempotencyTtlHours: 24 }, pino({ level: 'silent' })).run()).resultsDeleted, files);
    for (const key of keys) assert.equal(await stored(key), false);
  } finally {
    gate.open();
    results.close();
  }
});

/**
 * The web app's maintenance run while the bucket never answers (within the store timeout, logging
 * the outage once; `whileDown` checks what it left), then again once the bucket answers: that run's result.
 */
async function webRunsAcrossOutage(whileDown: (done: WebMaintenanceDone, log: LogCollector) => Promise<void>): Promise<WebMaintenanceDone> {
  const log = new LogCollector();
  gate.silence();
  const results = behindGate();
  const uploads = new S3UploadStore(results.client, configFor(`http://127.0.0.1:${gate.port}`, s3.bucket));
  const config = { resultRetentionHours: 24 };
  try {
    const started = Date.now();
    const done = await runWebMaintenance({ db: store.db, uploads, config, logger: pino({ level: 'warn' }, log.stream) });
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 2.5 * timeoutMs, `the run took ${elapsed} ms`);
    assert.equal(log.entries.length, 1, JSON.stringify(log.entries.map((e) => e.msg)));
    await whileDown(done, log);
    gate.open();
    return await runWebMaintenance({ db: store.db, uploads, config });
  } finally {
    gate.open();
    results.close();
  }
}

test("the web app's sweep of expired uploads, facing a bucket that never answers, ends within the store timeout, logs it once, and the next run deletes every upload", { timeout: 60_000 }, async () => {
  const { ids, uploadKeys } = await expiredUploads(files);
  const again = await webRunsAcrossOutage(async (done, log) => {
    assert.equal(done.uploads, 0);
    assert.match(log.entries[0]!.msg, /^The bucket failed; .*next run/);
    for (const [i, id] of ids.entries()) assert.equal((await findTaskSource(store.db, id))?.uploadKey, uploadKeys[i]);
  });
  assert.equal(again.uploads, files);
  for (const key of uploadKeys) assert.equal(await stored(`uploads/${key}`), false);
});

test("the web app's run, facing a bucket that never answers with both expired and orphaned uploads to delete, ends at the first outage instead of meeting it again in its next sweep", { timeout: 60_000 }, async () => {
  const uploadsDirect = new S3UploadStore(direct.client, configFor(s3.endpoint, s3.bucket));
  const { uploadKeys: expiredKeys } = await expiredUploads(files);
  const orphanedKeys: string[] = [];
  for (let i = 0; i < files; i++) {
    const uploadKey = newUploadKey();
    await recordPendingUpload(store.db, uploadKey, Date.now() - 2 * hourMs);
    await uploadsDirect.put(uploadKey, Buffer.from('orphaned image'));
    orphanedKeys.push(uploadKey);
  }
  const again = await webRunsAcrossOutage(async (done) => assert.equal(done.uploads + done.orphanedUploads, 0));
  assert.deepEqual([again.uploads, again.orphanedUploads], [files, files]);
  for (const key of [...expiredKeys, ...orphanedKeys]) assert.equal(await stored(`uploads/${key}`), false);
});
