import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { createAccount } from '../../src/store/accounts-repository.ts';
import type { Db } from '../../src/store/database.ts';
import { claimNextTask, completeTask, failTask } from '../../src/store/task-queue.ts';
import { createTask, findTask } from '../../src/store/tasks-repository.ts';
import { DiskResultStore } from '../../src/storage/disk-result-store.ts';
import { resultKey } from '../../src/storage/result-store.ts';
import { Maintenance } from '../../src/worker/maintenance.ts';
import { describeEachEngine, openTestStore } from '../support/engines.ts';
import { leaveWrites } from '../support/leftover-writes.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;
const lease = { leaseMs: 60_000, maxAttempts: 3 };
const hourMs = 3_600_000;
const config = { resultRetentionHours: 24, idempotencyTtlHours: 24 };

/** The real disk store, except that the keys in failOnce fail their next delete. */
class FlakyDiskStore extends DiskResultStore {
  readonly failOnce = new Set<string>();
  override async delete(key: string): Promise<void> {
    if (this.failOnce.delete(key)) throw new Error(`simulated S3 503 SlowDown for ${key}`);
    await super.delete(key);
  }
}

describeEachEngine('retention of result files', (engine) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let dir: string;
  let results: FlakyDiskStore;
  let maintenance: Maintenance;
  before(async () => {
    store = await openTestStore(engine);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-retention-'));
    results = new FlakyDiskStore(dir);
    maintenance = new Maintenance(store.db, results, config, pino({ level: 'silent' }));
  });
  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const stored = (key: string): boolean => fs.existsSync(path.join(dir, key));

  /** A task that succeeded at `at` with its result file stored, as a worker leaves it. */
  async function succeededTask(db: Db, at: number): Promise<{ id: string; key: string }> {
    const account = await createAccount(db, { email: `r-${Math.random()}@example.test`, plan: 'paid', credits: 1 });
    await createTask(db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 1 }, at);
    const claimed = await claimNextTask(db, lease, at);
    assert.ok(claimed);
    const key = resultKey(claimed.task.id, claimed.task.claims, 'png');
    await results.put(key, Buffer.from(`result of ${claimed.task.id}`));
    assert.ok(await completeTask(db, claimed.task.id, claimed.leaseToken, { key, width: 1, height: 1 }, at));
    return { id: claimed.task.id, key };
  }

  test('a result whose delete fails once is kept recorded, the others are deleted, and the next sweep deletes it', async () => {
    const old = Date.now() - 48 * hourMs;
    const tasks = [await succeededTask(store.db, old), await succeededTask(store.db, old), await succeededTask(store.db, old)];
    results.failOnce.add(tasks[1]!.key);
    assert.equal((await maintenance.run()).resultsDeleted, 2);
    assert.deepEqual(tasks.map((t) => stored(t.key)), [false, true, false]);
    assert.equal((await findTask(store.db, tasks[1]!.id))?.result_deleted_at, null, 'not marked deleted while its file is stored');
    assert.notEqual((await findTask(store.db, tasks[0]!.id))?.result_deleted_at, null);
    assert.equal((await maintenance.run()).resultsDeleted, 1);
    assert.equal(stored(tasks[1]!.key), false);
    assert.notEqual((await findTask(store.db, tasks[1]!.id))?.result_deleted_at, null);
    assert.equal((await maintenance.run()).resultsDeleted, 0);
  });

  test('a result whose file is already gone is marked deleted', async () => {
    const task = await succeededTask(store.db, Date.now() - 48 * hourMs);
    await results.delete(task.key);
    assert.equal((await maintenance.run()).resultsDeleted, 1);
    assert.notEqual((await findTask(store.db, task.id))?.result_deleted_at, null);
  });

  test('a result finished before each claim had its own key (key without a claim number) is still deleted', async () => {
    const task = await succeededTask(store.db, Date.now() - 48 * hourMs);
    const legacyKey = `${task.id}.png`;
    await results.put(legacyKey, Buffer.from('written by an older version'));
    await store.db.updateTable('tasks').set({ result_key: legacyKey, claims: 0 }).where('id', '=', task.id).execute();
    await results.delete(task.key);
    assert.equal((await maintenance.run()).resultsDeleted, 1);
    assert.equal(stored(legacyKey), false);
  });

  test('the file an attempt that lost its lease left behind is deleted at retention, though the takeover failed', async () => {
    const account = await createAccount(store.db, { email: `t-${Math.random()}@example.test`, plan: 'paid', credits: 1 });
    const old = Date.now() - 48 * hourMs;
    await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 1 }, old);
    const stale = await claimNextTask(store.db, lease, old);
    assert.ok(stale);
    const takeover = await claimNextTask(store.db, lease, old + lease.leaseMs + 1);
    assert.equal(takeover?.task.id, stale.task.id);
    assert.ok(await failTask(store.db, takeover.task.id, takeover.leaseToken, { code: 'processing_failed', message: 'failed' }, old + lease.leaseMs + 2));
    // The stalled attempt stores its file, then its process dies before it can finish (or delete it).
    const staleKey = resultKey(stale.task.id, stale.task.claims, 'png');
    await results.put(staleKey, Buffer.from('late result'));
    assert.equal((await maintenance.run(old + hourMs)).resultsDeleted, 0, 'kept until the task is past retention');
    assert.equal(stored(staleKey), true);
    assert.equal((await maintenance.run()).resultsDeleted, 1);
    assert.equal(stored(staleKey), false);
    assert.equal((await findTask(store.db, stale.task.id))?.status, 'failed');
  });

  test('the temporary file of a result write that died is removed once no write can still be using it; a fresh one and files not ours stay', async () => {
    const task = await succeededTask(store.db, Date.now());
    const left = leaveWrites(dir, task.key);
    const done = await new Maintenance(store.db, results, config, pino({ level: 'silent' })).run();
    assert.equal(stored(left.stale), false, 'the stale temporary file is removed');
    assert.equal(done.temporariesRemoved, 1);
    for (const name of [left.fresh, ...left.notOurs, task.key]) assert.equal(stored(name), true, `${name} is kept`);
    for (const name of [left.fresh, ...left.notOurs]) fs.rmSync(path.join(dir, name), { recursive: true });
  });

  test('a process looks for such temporary files at most once an hour, not on every sweep of the minute', async () => {
    const task = await succeededTask(store.db, Date.now());
    const hourly = new Maintenance(store.db, results, config, pino({ level: 'silent' }));
    // A minute back: a new file's time comes from the kernel's coarse clock, a few milliseconds
    // behind Date.now(), so the fresh temporary file made just after `now` read as older than it
    // and was swept an hour of `now` later with the stale one.
    const now = Date.now() - 60_000;
    assert.equal((await hourly.run(now)).temporariesRemoved, 0);
    const left = leaveWrites(dir, task.key);
    assert.equal((await hourly.run(now + 60_000)).temporariesRemoved, 0, 'a minute later the folder is not listed again');
    assert.equal(stored(left.stale), true);
    assert.equal((await hourly.run(now + hourMs)).temporariesRemoved, 1, 'an hour later it is');
    assert.equal(stored(left.stale), false);
    for (const name of [left.fresh, ...left.notOurs]) fs.rmSync(path.join(dir, name), { recursive: true });
  });

  test('a retention given as a fraction of an hour that is no whole number of milliseconds (0.333333 h) deletes results and purges idempotency keys', async () => {
    const twentyMinutes = new Maintenance(store.db, results, { resultRetentionHours: 0.333333, idempotencyTtlHours: 24.333333 }, pino({ level: 'silent' }));
    const old = Date.now() - 48 * hourMs;
    const task = await succeededTask(store.db, old);
    const account = await createAccount(store.db, { email: `f-${Math.random()}@example.test`, plan: 'paid', credits: 0 });
    await sql`insert into idempotency_keys (account_id, key, fingerprint, task_id, created_at) values (${account.id}, 'fraction', 'f', ${task.id}, ${old})`.execute(store.db);
    const done = await twentyMinutes.run();
    assert.ok(done.resultsDeleted >= 1);
    assert.ok(done.keysPurged >= 1);
    assert.equal(stored(task.key), false);
    assert.notEqual((await findTask(store.db, task.id))?.result_deleted_at, null);
  });

  test('a backlog of more expired results than one statement can name is deleted in one sweep, and idempotency keys are purged after it', async () => {
    const count = engine === 'postgres' ? 66_000 : 33_000;
    const account = await createAccount(store.db, { email: `b-${Math.random()}@example.test`, plan: 'paid', credits: 0 });
    const old = Date.now() - 48 * hourMs;
    const rows =
      engine === 'postgres'
        ? sql`select 'bgr_backlog' || lpad(g::text, 9, '0') as id from generate_series(1, ${count}) g`
        : sql`select 'bgr_backlog' || printf('%09d', g.i) as id from (with recursive s(i) as (select 1 union all select i + 1 from s where i < ${count}) select i from s) g`;
    await sql`insert into tasks (id, account_id, status, image_url, subject, precision, output_format, credits, attempts, claims, result_key, result_width, result_height, created_at, updated_at, finished_at)
      select r.id, ${account.id}, 'succeeded', 'https://example.test/a.png', 'auto', 'standard', 'png', 1, 1, 1, r.id || '-1.png', 1, 1, ${old}, ${old}, ${old}
      from (${rows}) r`.execute(store.db);
    await sql`insert into idempotency_keys (account_id, key, fingerprint, task_id, created_at) values (${account.id}, 'old', 'f', 'bgr_backlog000000001', ${old})`.execute(store.db);
    const sample = ['bgr_backlog000000001-1.png', `bgr_backlog${String(count).padStart(9, '0')}-1.png`];
    for (const key of sample) await results.put(key, Buffer.from(key));
    const done = await maintenance.run();
    assert.equal(done.resultsDeleted, count);
    assert.equal(done.keysPurged, 1);
    for (const key of sample) assert.equal(stored(key), false);
    const left = await store.db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', account.id).where('result_deleted_at', 'is', null).executeTakeFirstOrThrow();
    assert.equal(Number(left.n), 0);
  });
});
