// A process whose machine loses power (or its network) in the middle of a transaction never closes
// its connection: PostgreSQL hears nothing, and the transaction's row locks stay for as long as the
// server waits on that connection. The locks a worker's reaper and an API's create take are those
// of tasks and accounts, so other processes must get them back within the query timeout.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TableNode, UpdateQueryNode, type KyselyPlugin } from 'kysely';
import { createAccount, findAccount, listLedger } from '../../src/store/accounts-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { claimNextTask, failAbandonedTasks } from '../../src/store/task-queue.ts';
import { createTask, findTask } from '../../src/store/tasks-repository.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/engines.ts';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;
const queryTimeoutMs = 1000;
/** Long after the query timeout; the locks of a vanished process otherwise stay for hours (TCP's keepalive). */
const withinMs = 10 * queryTimeoutMs;

/** Calls fn until it returns a value, or throws its last error (or says so) once withinMs has passed. */
async function eventually<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    let failure: unknown;
    try {
      const value = await fn();
      if (value !== undefined) return value;
    } catch (err) {
      failure = err;
    }
    if (Date.now() > deadline) throw new Error(`${what} not within ${withinMs} ms${failure ? `: ${String(failure)}` : ''}`, { cause: failure });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Cuts the gate just before the first UPDATE of the table is sent: the process vanishes mid-transaction. */
function vanishBeforeUpdating(table: string, gate: TcpGate): KyselyPlugin {
  return {
    transformQuery({ node }) {
      if (UpdateQueryNode.is(node) && node.table && TableNode.is(node.table) && node.table.table.identifier.name === table) gate.cut();
      return node;
    },
    transformResult: async ({ result }) => result,
  };
}

describe('a process that vanishes mid-transaction (its machine lost power)', { skip: postgresUrl ? false : 'CUTOUT_TEST_POSTGRES_URL is not set' }, () => {
  let database: TestDatabase;
  let gate: TcpGate;
  let dataDir: string;
  let gatedUrl: string;
  let direct: Db;

  before(async () => {
    database = await createTestDatabase();
    gate = await startTcpGate(Number(new URL(database.url).port || 5432));
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-vanished-'));
    const gated = new URL(database.url);
    gated.hostname = '127.0.0.1';
    gated.port = String(gate.port);
    gatedUrl = gated.toString();
    direct = await openDatabase({ dataDir, databaseUrl: database.url, poolSize: 4, queryTimeoutMs });
  });
  after(async () => {
    await direct.destroy();
    await gate.close();
    await database.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Runs fn as a process of its own that vanishes during it: fn fails once its statement goes unanswered. */
  async function vanishing(fn: (db: Db) => Promise<unknown>): Promise<void> {
    const db = await openDatabase({ dataDir, databaseUrl: gatedUrl, poolSize: 1, queryTimeoutMs });
    try {
      await assert.rejects(fn(db), /Query read timeout/);
    } finally {
      await db.destroy();
    }
  }

  test('tasks its worker was failing as abandoned are failed and refunded by another worker, not left processing', async () => {
    const account = await createAccount(direct, { email: 'reaped@example.test', plan: 'paid', credits: 5 });
    const { task } = await createTask(direct, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 5 });
    // Its one attempt was claimed long ago and its worker died: the lease has expired.
    assert.equal((await claimNextTask(direct, { leaseMs: 60_000, maxAttempts: 1 }, Date.now() - 120_000))?.task.id, task.id);

    await vanishing((db) => failAbandonedTasks(db.withPlugin(vanishBeforeUpdating('accounts', gate)), 1));

    const reaped = await eventually('another worker failed the abandoned task', async () => {
      const ids = await failAbandonedTasks(direct, 1);
      return ids.length > 0 ? ids : undefined;
    });
    assert.deepEqual(reaped, [task.id]);
    assert.equal((await findTask(direct, task.id))?.status, 'failed');
    assert.deepEqual((await listLedger(direct, account.id)).map((e) => e.kind), ['grant', 'reserve', 'refund']);
    const after = await findAccount(direct, account.id);
    assert.deepEqual([after?.creditsAvailable, after?.creditsReserved], [5, 0]);
  });

  test('an account it was creating a task for can create tasks again, and the lost create reserved nothing', async () => {
    const account = await createAccount(direct, { email: 'creating@example.test', plan: 'paid', credits: 5 });
    // The create's last statement before its commit (the task's source, in the web app) never arrives.
    await vanishing((db) =>
      createTask(db, {
        accountId: account.id,
        input,
        idempotencyKey: 'lost',
        maxActiveTasks: 5,
        onCreate: async (tx) => {
          gate.cut();
          await tx.selectFrom('accounts').select('id').execute();
        },
      }),
    );

    const created = await eventually('a create for the same account succeeded', () =>
      createTask(direct, { accountId: account.id, input, idempotencyKey: 'lost', maxActiveTasks: 5 }),
    );
    assert.equal(created.replayed, false);
    const after = await findAccount(direct, account.id);
    assert.deepEqual([after?.creditsAvailable, after?.creditsReserved], [4, 1]);
  });
});
