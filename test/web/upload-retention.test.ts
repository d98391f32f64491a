import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createAccount } from '../../src/store/accounts-repository.ts';
import { claimNextTask, failTask } from '../../src/store/task-queue.ts';
import { createTask } from '../../src/store/tasks-repository.ts';
import { findTaskSource, recordTaskSource } from '../../src/store/web-tasks-repository.ts';
import { DiskUploadStore, newUploadKey } from '../../src/storage/upload-store.ts';
import { runWebMaintenance } from '../../src/web/web-maintenance.ts';
import { describeEachEngine, openTestStore } from '../support/engines.ts';
import { leaveWrites } from '../support/leftover-writes.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;
const hourMs = 3_600_000;
const config = { resultRetentionHours: 24 };

/** The real disk store, except that the keys in failOnce fail their next delete. */
class FlakyUploadStore extends DiskUploadStore {
  readonly failOnce = new Set<string>();
  override async delete(key: string): Promise<void> {
    if (this.failOnce.delete(key)) throw new Error(`simulated S3 503 SlowDown for ${key}`);
    await super.delete(key);
  }
}

describeEachEngine('retention of uploads', (engine) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let dir: string;
  let uploads: FlakyUploadStore;
  const warnings: string[] = [];
  const logger = { warn: (fields: { key: string }) => void warnings.push(fields.key) };
  before(async () => {
    store = await openTestStore(engine);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-upload-retention-'));
    uploads = new FlakyUploadStore(dir);
  });
  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A task made in the browser from an upload, finished at `at`. */
  async function uploadedTask(at: number): Promise<{ taskId: string; uploadKey: string }> {
    const account = await createAccount(store.db, { email: `u-${Math.random()}@example.test`, plan: 'free', credits: 1 });
    const { task } = await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 1 }, at);
    const uploadKey = newUploadKey();
    await uploads.put(uploadKey, Buffer.from('source image'));
    await recordTaskSource(store.db, task.id, { uploadKey, maxPixels: null }, at);
    const claimed = await claimNextTask(store.db, { leaseMs: 60_000, maxAttempts: 3 }, at);
    assert.equal(claimed?.task.id, task.id);
    assert.ok(await failTask(store.db, task.id, claimed.leaseToken, { code: 'processing_failed', message: 'failed' }, at));
    return { taskId: task.id, uploadKey };
  }

  test('an upload whose delete fails once stays recorded and is deleted by the next run; the others are deleted meanwhile', async () => {
    const old = Date.now() - 48 * hourMs;
    const tasks = [await uploadedTask(old), await uploadedTask(old), await uploadedTask(old)];
    uploads.failOnce.add(tasks[0]!.uploadKey);
    assert.equal((await runWebMaintenance({ db: store.db, uploads, config, logger })).uploads, 2);
    assert.deepEqual(warnings, [tasks[0]!.uploadKey], 'the failure is logged');
    assert.deepEqual(await Promise.all(tasks.map(async (t) => (await uploads.read(t.uploadKey)) !== undefined)), [true, false, false]);
    assert.equal((await findTaskSource(store.db, tasks[0]!.taskId))?.uploadKey, tasks[0]!.uploadKey);
    assert.equal((await runWebMaintenance({ db: store.db, uploads, config, logger })).uploads, 1);
    assert.equal(await uploads.read(tasks[0]!.uploadKey), undefined);
    assert.equal((await findTaskSource(store.db, tasks[0]!.taskId))?.uploadKey, null);
  });

  test('the temporary file of an upload write that died is removed once no write can still be using it; a fresh one and files not ours stay', async () => {
    const uploadKey = newUploadKey();
    await uploads.put(uploadKey, Buffer.from('source image'));
    const left = leaveWrites(dir, uploadKey);
    const done = await runWebMaintenance({ db: store.db, uploads, config, logger });
    const stored = (name: string): boolean => fs.existsSync(path.join(dir, name));
    assert.equal(stored(left.stale), false, 'the stale temporary file is removed');
    assert.equal(done.temporaries, 1);
    for (const name of [left.fresh, ...left.notOurs, uploadKey]) assert.equal(stored(name), true, `${name} is kept`);
    for (const name of [left.fresh, ...left.notOurs, uploadKey]) fs.rmSync(path.join(dir, name), { recursive: true });
  });

  test('a retention given as a fraction of an hour that is no whole number of milliseconds (0.333333 h) deletes uploads', async () => {
    const task = await uploadedTask(Date.now() - 48 * hourMs);
    const done = await runWebMaintenance({ db: store.db, uploads, config: { resultRetentionHours: 0.333333 }, logger });
    assert.ok(done.uploads >= 1);
    assert.equal(await uploads.read(task.uploadKey), undefined);
    assert.equal((await findTaskSource(store.db, task.taskId))?.uploadKey, null);
  });

  test('a backlog of more expired uploads than one statement can name is deleted in one run', async () => {
    const count = engine === 'postgres' ? 66_000 : 33_000;
    const account = await createAccount(store.db, { email: `b-${Math.random()}@example.test`, plan: 'free', credits: 0 });
    const old = Date.now() - 48 * hourMs;
    const numbers =
      engine === 'postgres'
        ? sql`select lpad(g::text, 20, '0') as n from generate_series(1, ${count}) g`
        : sql`select printf('%020d', s.i) as n from (with recursive s(i) as (select 1 union all select i + 1 from s where i < ${count}) select i from s) s`;
    await sql`insert into tasks (id, account_id, status, image_url, subject, precision, output_format, credits, attempts, created_at, updated_at, finished_at)
      select 'bgr_' || r.n, ${account.id}, 'failed', 'https://example.test/a.png', 'auto', 'standard', 'png', 1, 1, ${old}, ${old}, ${old} from (${numbers}) r`.execute(store.db);
    await sql`insert into web_task_sources (task_id, upload_key, max_pixels, created_at)
      select 'bgr_' || r.n, 'upl_0000' || r.n, null, ${old} from (${numbers}) r`.execute(store.db);
    assert.equal((await runWebMaintenance({ db: store.db, uploads, config, logger })).uploads, count);
    const left = await store.db.selectFrom('web_task_sources').select((eb) => eb.fn.countAll<number>().as('n')).where('upload_key', 'is not', null).executeTakeFirstOrThrow();
    assert.equal(Number(left.n), 0);
  });
});
