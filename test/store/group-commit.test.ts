import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery } from 'kysely';
import { createAccount, findAccount, listLedger } from '../../src/store/accounts-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { inGroupCommit, maxGroup } from '../../src/store/group-commit.ts';
import { createTask } from '../../src/store/tasks-repository.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;

describe('task creates on SQLite committed together', () => {
  let dir: string;
  let db: Db;
  /** A second connection to the same file: it sees only what has been committed. */
  let other: SQLite.Database;
  const committedTasks = (accountId: string) => (other.prepare('select count(*) as n from tasks where account_id = ?').get(accountId) as { n: number }).n;
  const createFor = (accountId: string, { idempotencyKey, maxActiveTasks = 10 }: { idempotencyKey?: string; maxActiveTasks?: number } = {}) =>
    createTask(db, { accountId, input, idempotencyKey, maxActiveTasks });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-group-commit-'));
    db = await openDatabase({ dataDir: dir });
    other = new SQLite(path.join(dir, 'cutout.sqlite'), { readonly: true });
  });
  after(async () => {
    other.close();
    await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('creates made in one turn of the event loop become visible to other connections together, once the last has run', async () => {
    const account = await createAccount(db, { email: 'together@example.test', plan: 'paid', credits: 10 });
    const create = () => createFor(account.id);
    const creates = [create(), create(), create()];
    let seenInside = -1;
    let seenOutside = -1;
    const probe = inGroupCommit(db, async (tx) => {
      seenInside = Number((await tx.selectFrom('tasks').select((eb) => eb.fn.countAll().as('n')).where('account_id', '=', account.id).executeTakeFirstOrThrow()).n);
      seenOutside = committedTasks(account.id);
    });
    await Promise.all([...creates, probe]);
    assert.equal(seenInside, 3, 'the creates before it in the group are seen inside the transaction');
    assert.equal(seenOutside, 0, 'none was committed while the group ran');
    assert.equal(committedTasks(account.id), 3);
    assert.equal((await findAccount(db, account.id))!.creditsAvailable, 7);
  });

  test('a create that arrives later in the same turn of the event loop (another request read from the network) joins the group', async () => {
    const account = await createAccount(db, { email: 'same-turn@example.test', plan: 'paid', credits: 10 });
    let seenOutside = -1;
    let later: Promise<void> | undefined;
    // Callbacks of one turn run in order: this one runs after the first create has run, before its group commits.
    setImmediate(() => {
      later = inGroupCommit(db, async () => {
        seenOutside = committedTasks(account.id);
      });
    });
    await createFor(account.id);
    await later;
    assert.equal(seenOutside, 0, 'the first create was not committed before the later call ran');
    assert.equal(committedTasks(account.id), 1);
  });

  test('a create refused in a group refuses that create alone: the others keep their tasks and reservations', async () => {
    const account = await createAccount(db, { email: 'refused@example.test', plan: 'paid', credits: 3 });
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => createFor(account.id)));
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? 'created' : (r.reason as { code?: string }).code)),
      ['created', 'created', 'created', 'insufficient_credits', 'insufficient_credits'],
    );
    assert.equal(committedTasks(account.id), 3);
    const ledger = await listLedger(db, account.id);
    assert.equal(ledger.filter((entry) => entry.kind === 'reserve').length, 3);
    assert.equal((await findAccount(db, account.id))!.creditsAvailable, 0);
  });

  test('two creates with one idempotency key in one turn make one task, the second a replay of the first', async () => {
    const account = await createAccount(db, { email: 'same-key@example.test', plan: 'paid', credits: 10 });
    const create = () => createFor(account.id, { idempotencyKey: 'k-1' });
    const [first, second] = await Promise.all([create(), create()]);
    assert.equal(first.replayed, false);
    assert.equal(second.replayed, true);
    assert.equal(second.task.id, first.task.id);
    assert.equal(committedTasks(account.id), 1);
  });

  test('a call that throws after writing keeps none of its writes, and its neighbours in the group keep theirs', async () => {
    const account = await createAccount(db, { email: 'throws@example.test', plan: 'paid', credits: 10 });
    const create = () => createFor(account.id);
    const before = create();
    const failing = inGroupCommit(db, async (tx) => {
      await tx.updateTable('accounts').set({ credits_available: 0 }).where('id', '=', account.id).execute();
      throw new Error('changed its mind');
    });
    const afterwards = create();
    await assert.rejects(failing, /changed its mind/);
    await Promise.all([before, afterwards]);
    assert.equal(committedTasks(account.id), 2);
    assert.equal((await findAccount(db, account.id))!.creditsAvailable, 8);
  });

  test('when SQLite loses the transaction under a call, every call of its group fails with that call’s error and none of their writes is kept', async () => {
    const account = await createAccount(db, { email: 'lost@example.test', plan: 'paid', credits: 10 });
    const create = () => createFor(account.id);
    const before = create();
    const losing = inGroupCommit(db, async (tx) => {
      await tx.executeQuery(CompiledQuery.raw('rollback'));
      throw new Error('the disk is full');
    });
    const afterwards = create();
    const outcomes = await Promise.allSettled([before, losing, afterwards]);
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'created')),
      ['the disk is full', 'the disk is full', 'the disk is full'],
    );
    assert.equal(committedTasks(account.id), 0);
    assert.equal((await findAccount(db, account.id))!.creditsAvailable, 10);
    const later = await create();
    assert.equal(committedTasks(account.id), 1, `a create after the lost group (${later.task.id}) works`);
  });

  test(`more than ${maxGroup} creates in one turn are all made, in groups of at most ${maxGroup}`, async () => {
    const count = 2 * maxGroup + 3;
    const account = await createAccount(db, { email: 'many@example.test', plan: 'paid', credits: count });
    const committedWhenRun = new Map<number, number>();
    const probeAt = new Set([maxGroup - 1, maxGroup]);
    const calls = Array.from({ length: count }, (_, i) =>
      probeAt.has(i)
        ? inGroupCommit(db, async () => {
            committedWhenRun.set(i, committedTasks(account.id));
          })
        : createFor(account.id, { maxActiveTasks: count }),
    );
    await Promise.all(calls);
    assert.equal(committedWhenRun.get(maxGroup - 1), 0, `the ${maxGroup}th call ran in the first group, before its commit`);
    assert.equal(committedWhenRun.get(maxGroup), maxGroup - 1, 'the next ran in a second group, after the first had committed');
    assert.equal(committedTasks(account.id), count - 2);
  });
});
