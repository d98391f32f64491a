import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import sharp from 'sharp';
import { createAccount, listLedger } from '../../src/store/accounts-repository.ts';
import type { Task } from '../../src/store/task-row.ts';
import { postgresPool } from '../../src/store/database.ts';
import { createTask, findTask } from '../../src/store/tasks-repository.ts';
import { DiskResultStore } from '../../src/storage/disk-result-store.ts';
import type { Segmenter } from '../../src/vision/remove-background.ts';
import { createTaskProcessor } from '../../src/worker/process-task.ts';
import { Worker } from '../../src/worker/worker.ts';
import { describeEachEngine, openTestStore, postgresUrl } from '../support/engines.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;
/** A stand-in model that keeps every pixel: the cutout is the source, so results tell sources apart. */
const keepAll: Segmenter = { predict: async (_rgb, side = 320) => new Float32Array(side * side).fill(1) };

function image(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer();
}

describeEachEngine('an attempt that lost its lease', (engine) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let dir: string;
  before(async () => {
    store = await openTestStore(engine);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-stale-'));
  });
  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('finishing late, it neither overwrites nor deletes the result of the attempt that took over, and its own file is deleted', async () => {
    const results = new DiskResultStore(dir);
    const account = await createAccount(store.db, { email: `s-${Math.random()}@example.test`, plan: 'paid', credits: 5 });
    const { task } = await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 5 });
    // The stalled attempt read the source as it was (4×3); the one that took over reads it as it is now (6×2).
    let stalled!: () => void;
    const hasStalled = new Promise<void>((resolve) => (stalled = resolve));
    let wakeUp!: () => void;
    const woken = new Promise<void>((resolve) => (wakeUp = resolve));
    const staleSource = async (): Promise<Buffer> => {
      stalled();
      await woken;
      return image(4, 3);
    };
    const currentSource = (): Promise<Buffer> => image(6, 2);
    const worker = (readSource: (task: Task) => Promise<Buffer>): Worker =>
      new Worker({
        db: store.db,
        logger: pino({ level: 'silent' }),
        process: createTaskProcessor({ maxPixels: 1_000_000, leaseMs: 60_000 }, keepAll, results, readSource),
        results,
        concurrency: 1,
        leaseMs: 60_000,
        maxAttempts: 3,
      });

    const staleRun = worker(staleSource).runOnce();
    await hasStalled;
    await store.db.updateTable('tasks').set({ lease_expires_at: Date.now() - 1 }).where('id', '=', task.id).execute();
    assert.equal(await worker(currentSource).runOnce(), true);
    wakeUp();
    assert.equal(await staleRun, true);

    const done = await findTask(store.db, task.id);
    assert.equal(done?.status, 'succeeded');
    assert.deepEqual([done?.result_width, done?.result_height], [6, 2]);
    const served = await sharp(path.join(dir, done?.result_key ?? '-')).metadata();
    assert.deepEqual([served.width, served.height], [6, 2], 'the stored file is the result the task records');
    assert.deepEqual(fs.readdirSync(dir), [done?.result_key], "the late attempt's own file was deleted");
    assert.deepEqual((await listLedger(store.db, account.id)).filter((e) => e.taskId === task.id).map((e) => e.kind), ['reserve', 'charge']);
  });
});

test('an ending that committed but whose reply was lost keeps its result: the task reads succeeded and its file is kept', { skip: !postgresUrl && 'needs PostgreSQL (CUTOUT_TEST_POSTGRES_URL)' }, async () => {
  const store = await openTestStore('postgres');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-lost-reply-'));
  try {
    const results = new DiskResultStore(dir);
    const account = await createAccount(store.db, { email: `r-${Math.random()}@example.test`, plan: 'paid', credits: 5 });
    const { task } = await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 5 });
    // The ending commits on the server, then its connection drops before the reply: the worker's
    // retry finds the lease already gone, as it would after a failover.
    const pool = postgresPool(store.db);
    const query = pool.query.bind(pool) as (config: { name?: string }) => Promise<unknown>;
    let dropped = false;
    Object.assign(pool, {
      query: async (config: { name?: string }) => {
        const answer = await query(config);
        if (!dropped && config.name === 'cutout-end-charge') {
          dropped = true;
          throw new Error('Connection terminated unexpectedly');
        }
        return answer;
      },
    });
    const worker = new Worker({
      db: store.db,
      logger: pino({ level: 'silent' }),
      process: createTaskProcessor({ maxPixels: 1_000_000, leaseMs: 60_000 }, keepAll, results, () => image(4, 3)),
      results,
      concurrency: 1,
      leaseMs: 60_000,
      maxAttempts: 3,
    });
    assert.equal(await worker.runOnce(), true);
    assert.ok(dropped, 'the ending was made to lose its reply');

    const done = await findTask(store.db, task.id);
    assert.equal(done?.status, 'succeeded');
    assert.deepEqual(fs.readdirSync(dir), [done?.result_key], 'the file of the recorded result is kept');
    assert.deepEqual((await listLedger(store.db, account.id)).filter((e) => e.taskId === task.id).map((e) => e.kind), ['reserve', 'charge']);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
