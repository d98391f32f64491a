import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { createAccount, findAccount, listLedger } from '../../src/store/accounts-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { claimNextTask, completeTask, extendLease, failTask, releaseTask } from '../../src/store/task-queue.ts';
import { createTask, findTask } from '../../src/store/tasks-repository.ts';
import { createTestDatabase, describeEachEngine, openTestStore } from '../support/engines.ts';

const lease = { leaseMs: 60_000, maxAttempts: 3 };
const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;

async function queueTasks(db: Db, count: number): Promise<{ accountId: string; ids: string[] }> {
  const account = await createAccount(db, { email: `queue-${Date.now()}-${Math.random()}@example.test`, plan: 'paid', credits: count });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await createTask(db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: count }, Date.now() + i)).task.id);
  }
  return { accountId: account.id, ids };
}

describeEachEngine('the task queue', (engine) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  before(async () => {
    store = await openTestStore(engine);
  });
  after(() => store.close());

  test('16 concurrent claimers take 64 tasks: each task is claimed by exactly one, none is lost', async () => {
    const { accountId, ids } = await queueTasks(store.db, 64);
    const claimedBy = new Map<string, number>();
    const claimer = async (n: number): Promise<void> => {
      for (;;) {
        const claimed = await claimNextTask(store.db, lease);
        if (!claimed) return;
        assert.ok(!claimedBy.has(claimed.task.id), `task ${claimed.task.id} claimed twice`);
        claimedBy.set(claimed.task.id, n);
        assert.ok(await completeTask(store.db, claimed.task.id, claimed.leaseToken, { key: `${claimed.task.id}.png`, width: 1, height: 1 }));
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, n) => claimer(n)));
    assert.deepEqual([...claimedBy.keys()].sort(), [...ids].sort());
    const charges = (await listLedger(store.db, accountId)).filter((e) => e.kind === 'charge');
    assert.equal(charges.length, 64);
    const account = await findAccount(store.db, accountId);
    assert.equal(account?.creditsAvailable, 0);
    assert.equal(account?.creditsReserved, 0);
    if (engine === 'postgres') assert.ok(new Set(claimedBy.values()).size > 1, 'the claims were spread over several claimers');
  });

  test('only the holder of the current attempt can extend, finish, fail or release it', async () => {
    const { ids } = await queueTasks(store.db, 1);
    const first = await claimNextTask(store.db, lease);
    assert.ok(first);
    assert.equal(first.task.id, ids[0]);
    await store.db.updateTable('tasks').set({ lease_expires_at: Date.now() - 1 }).where('id', '=', first.task.id).execute();
    const second = await claimNextTask(store.db, lease);
    assert.ok(second);
    assert.equal(second.task.id, first.task.id);
    assert.notEqual(second.leaseToken, first.leaseToken);
    assert.equal(await extendLease(store.db, first.task.id, first.leaseToken, 60_000), false);
    assert.equal(await releaseTask(store.db, first.task.id, first.leaseToken), false);
    assert.equal(await failTask(store.db, first.task.id, first.leaseToken, { code: 'processing_failed', message: 'late' }), false);
    assert.equal(await completeTask(store.db, first.task.id, first.leaseToken, { key: 'bgr_late.png', width: 9, height: 9 }), false);
    assert.equal(await extendLease(store.db, second.task.id, second.leaseToken, 60_000), true);
    assert.equal(await completeTask(store.db, second.task.id, second.leaseToken, { key: `${second.task.id}.png`, width: 2, height: 2 }), true);
    assert.equal((await findTask(store.db, second.task.id))?.result_width, 2);
  });

  test('a late finish racing a takeover never settles the task twice', async () => {
    const { accountId, ids } = await queueTasks(store.db, 20);
    const held = [];
    for (let i = 0; i < ids.length; i++) held.push(await claimNextTask(store.db, lease));
    await store.db.updateTable('tasks').set({ lease_expires_at: Date.now() - 1 }).where('id', 'in', ids).execute();
    // The stalled holders finish at the very moment new claimers take the tasks over.
    const late = held.map((c) => (c ? completeTask(store.db, c.task.id, c.leaseToken, { key: `${c.task.id}.png`, width: 1, height: 1 }) : false));
    const takeovers = Array.from({ length: 20 }, () => claimNextTask(store.db, lease));
    const [lateResults, claims] = await Promise.all([Promise.all(late), Promise.all(takeovers)]);
    for (const claim of claims) {
      if (claim) await completeTask(store.db, claim.task.id, claim.leaseToken, { key: `${claim.task.id}.png`, width: 2, height: 2 });
    }
    const won = lateResults.filter(Boolean).length + claims.filter(Boolean).length;
    assert.equal(won, 20, 'every task was finished by exactly one of its attempts');
    const kinds = (await listLedger(store.db, accountId)).filter((e) => e.taskId !== null).map((e) => e.kind);
    assert.equal(kinds.filter((k) => k === 'charge').length, 20);
    assert.equal((await findAccount(store.db, accountId))?.creditsReserved, 0);
  });

  test('the active-task limit counts queued and processing tasks: a finished task frees its slot, a released one keeps it', async () => {
    const account = await createAccount(store.db, { email: `limit-${Date.now()}@example.test`, plan: 'paid', credits: 10 });
    // Created long ago, so that these are the oldest tasks in the queue and the next claims take them.
    const create = (at: number) => createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 2 }, at);
    await create(1);
    await create(2);
    await assert.rejects(create(3), { code: 'concurrency_limit' });
    const first = await claimNextTask(store.db, lease);
    assert.equal(first?.task.account_id, account.id);
    await assert.rejects(create(3), { code: 'concurrency_limit' }, 'a processing task still counts');
    assert.ok(await releaseTask(store.db, first.task.id, first.leaseToken));
    await assert.rejects(create(3), { code: 'concurrency_limit' }, 'a released task is queued again and still counts');
    const again = await claimNextTask(store.db, lease);
    assert.ok(again && (await completeTask(store.db, again.task.id, again.leaseToken, { key: 'done.png', width: 1, height: 1 })));
    await create(3);
    const next = await claimNextTask(store.db, lease);
    assert.ok(next && (await failTask(store.db, next.task.id, next.leaseToken, { code: 'processing_failed', message: 'broken' })));
    await create(4);
    await assert.rejects(create(5), { code: 'concurrency_limit' });
    for (const left of [await claimNextTask(store.db, lease), await claimNextTask(store.db, lease)]) {
      assert.equal(left?.task.account_id, account.id);
      await completeTask(store.db, left.task.id, left.leaseToken, { key: 'done.png', width: 1, height: 1 });
    }
    assert.equal((await findAccount(store.db, account.id))?.creditsReserved, 0);
  });

  test('the concurrency refusal states the limit in words that agree with it', async () => {
    // A store of its own: the tasks it leaves queued would be claimed by the tests after it.
    const own = await openTestStore(engine);
    try {
      const account = await createAccount(own.db, { email: 'limit-one@example.test', plan: 'paid', credits: 10 });
      const create = (maxActiveTasks: number) => createTask(own.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks });
      await create(1);
      await assert.rejects(create(1), { code: 'concurrency_limit', message: 'At most 1 task may be queued or processing at once; wait for one to finish.' });
      await create(2);
      await assert.rejects(create(2), { code: 'concurrency_limit', message: 'At most 2 tasks may be queued or processing at once; wait for one to finish.' });
    } finally {
      await own.close();
    }
  });

  test('a released task is queued again without spending an attempt', async () => {
    const { ids } = await queueTasks(store.db, 1);
    const claimed = await claimNextTask(store.db, lease);
    assert.ok(claimed);
    assert.equal(claimed.task.id, ids[0]);
    assert.equal(await releaseTask(store.db, claimed.task.id, claimed.leaseToken), true);
    const task = await findTask(store.db, claimed.task.id);
    assert.equal(task?.status, 'queued');
    assert.equal(task?.attempts, 0);
    const again = await claimNextTask(store.db, lease);
    assert.equal(again?.task.attempts, 1);
  });

  test('every claim of a task gets a number of its own, a released one and a takeover too, so no two attempts write the same result file', async () => {
    // A store of its own: tasks other tests left queued or processing would be claimed first.
    const own = await openTestStore(engine);
    try {
      const { ids } = await queueTasks(own.db, 1);
      const first = await claimNextTask(own.db, lease);
      assert.ok(first);
      assert.equal(first.task.id, ids[0]);
      assert.equal(await releaseTask(own.db, first.task.id, first.leaseToken), true);
      const second = await claimNextTask(own.db, lease);
      const third = await claimNextTask(own.db, lease, Date.now() + lease.leaseMs + 1);
      assert.ok(third);
      assert.equal(third.task.id, ids[0]);
      assert.deepEqual([first.task.claims, second?.task.claims, third.task.claims], [1, 2, 3]);
      assert.deepEqual([second?.task.attempts, third.task.attempts], [1, 2]);
    } finally {
      await own.close();
    }
  });
});

interface Opened {
  code: number | null;
  stderr: string;
}

/**
 * A process that has loaded the store's code and opens the store, with its own connection as every
 * `cutout` process does, when `open` is called: several of them can then start at the same moment.
 */
async function readyOpener(dataDir: string, databaseUrl = ''): Promise<{ open(): Promise<Opened> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '../support/open-store-child.ts'), dataDir, databaseUrl], {
    cwd: path.join(import.meta.dirname, '../..'),
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const ended = new Promise<Opened>((resolve) => child.once('close', (code) => resolve({ code, stderr })));
  await Promise.race([once(child.stdout, 'data'), ended]);
  return {
    open() {
      child.stdin.end();
      return ended;
    },
  };
}

describe('a new SQLite file', () => {
  test('a process opening it while another holds its write lock, before the file is switched to WAL, waits for the lock and starts', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-new-file-'));
    // What a second process starting on the same new file holds while it switches the file to WAL.
    const holder = new SQLite(path.join(dataDir, 'cutout.sqlite'));
    try {
      holder.exec('begin immediate');
      const opener = await readyOpener(dataDir);
      const opened = opener.open();
      // Nothing outside the opener shows when it begins to wait, so the lock is let go a while after
      // it is told to open: long after an opener that does not wait has failed, well within the
      // 5-second busy timeout of one that waits.
      await Promise.race([opened, delay(1000)]);
      holder.exec('commit');
      assert.deepEqual(await opened, { code: 0, stderr: '' });
      assert.equal(holder.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      holder.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describeEachEngine('migrations', (engine) => {
  test('six processes starting at once on an empty database apply each migration exactly once', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-migrate-'));
    const database = engine === 'postgres' ? await createTestDatabase() : undefined;
    try {
      // All six have loaded the code before any opens, so that their opens meet on the new file.
      const openers = await Promise.all(Array.from({ length: 6 }, () => readyOpener(dataDir, database?.url)));
      const runs = await Promise.all(openers.map((opener) => opener.open()));
      assert.deepEqual(runs.filter((run) => run.code !== 0), []);
      const db = await openDatabase({ dataDir, databaseUrl: database?.url, poolSize: 1 });
      const applied = (await db.selectFrom('kysely_migration' as never).selectAll().execute()) as { name: string }[];
      await db.destroy();
      assert.deepEqual(applied.map((m) => m.name).sort(), ['001-initial', '002-web', '003-active-tasks', '004-result-key', '005-rate-windows', '006-email-case', '007-sign-up-attempts', '008-pending-uploads']);
    } finally {
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a database a newer version has migrated further is refused with database_unavailable, not used', async () => {
    const store = await openTestStore(engine);
    try {
      await store.db.insertInto('kysely_migration' as never).values({ name: '999-from-a-newer-version', timestamp: new Date().toISOString() } as never).execute();
      await assert.rejects(openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, poolSize: 1 }), {
        code: 'database_unavailable',
        message: /previously executed migration 999-from-a-newer-version is missing/,
      });
    } finally {
      await store.close();
    }
  });
});
