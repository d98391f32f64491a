// Creating and reading tasks: the API's side of the tasks table.
import { sql } from 'kysely';
import { ApiError } from '../domain/errors.ts';
import { isWellFormedId, newId } from '../domain/ids.ts';
import { canonicalFingerprint, creditCost, type RemovalInput } from '../domain/removal-request.ts';
import { engineOf, type Db, type Tx } from './database.ts';
import { inGroupCommit } from './group-commit.ts';
import { toTask, type Task } from './task-row.ts';
import { compiledOnce } from './compiled-once.ts';

export interface CreateTaskRequest {
  accountId: string;
  input: RemovalInput;
  idempotencyKey: string | undefined;
  maxActiveTasks: number;
  /** Runs inside the creating transaction, so a worker never sees the task without it. */
  onCreate?: (tx: Tx, taskId: string) => Promise<void>;
}

export interface CreateTaskResult {
  task: Task;
  /** True when an earlier request with the same idempotency key created the task. */
  replayed: boolean;
}

const concurrencyRetryAfterSeconds = 5;

/**
 * One transaction: idempotency lookup, concurrency and balance checks, the task row, the credit
 * reservation and the idempotency record. Concurrent creates for one account serialise (SQLite:
 * the write lock, creates of one turn of the event loop committed together, each in its savepoint:
 * group-commit.ts; PostgreSQL: a lock on the account row taken first), so two requests with one key
 * create one task, the active-task limit holds, and the balance can never be over-reserved.
 */
export async function createTask(db: Db, req: CreateTaskRequest, now = Date.now()): Promise<CreateTaskResult> {
  const fingerprint = canonicalFingerprint(req.input);
  return inGroupCommit(db, async (tx) => {
    if (engineOf(tx) === 'postgres') {
      await tx.selectFrom('accounts').select('id').where('id', '=', req.accountId).forUpdate().execute();
    }
    if (req.idempotencyKey !== undefined) {
      const prior = await findIdempotentTask(tx, req.accountId, req.idempotencyKey);
      if (prior) {
        if (prior.fingerprint !== fingerprint) {
          throw new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body.');
        }
        return { task: prior.task, replayed: true };
      }
    }

    // The limit and the balance are checked by the reserving update itself; only a refusal reads
    // the row again, to say which one refused (the active-task limit is reported first).
    const cost = creditCost[req.input.precision];
    const reserved = await reserveCredits(tx, req.accountId, cost, req.maxActiveTasks);
    if (reserved.length === 0) {
      const account = await tx.selectFrom('accounts').select('active_tasks').where('id', '=', req.accountId).executeTakeFirstOrThrow();
      if (Number(account.active_tasks) >= req.maxActiveTasks) {
        throw new ApiError(
          'concurrency_limit',
          `At most ${req.maxActiveTasks} task${req.maxActiveTasks === 1 ? '' : 's'} may be queued or processing at once; wait for one to finish.`,
          { 'Retry-After': String(concurrencyRetryAfterSeconds) },
        );
      }
      throw new ApiError('insufficient_credits', `This task needs ${cost} credit${cost > 1 ? 's' : ''}; the account does not have enough.`);
    }

    const id = newId('bgr', now);
    const { image_url, subject, precision, output_format } = req.input;
    const [row] = await insertQueuedTask(tx, id, req.accountId, image_url, subject, precision, output_format, cost, now);
    if (!row) throw new Error('the task insert returned no row');
    await insertReservation(tx, req.accountId, id, -cost, cost, now);
    await req.onCreate?.(tx, id);
    if (req.idempotencyKey !== undefined) {
      await tx
        .insertInto('idempotency_keys')
        .values({ account_id: req.accountId, key: req.idempotencyKey, fingerprint, task_id: id, created_at: now })
        .execute();
    }
    return { task: toTask(row), replayed: false };
  });
}

// A create's three writes, compiled once (compiled-once.ts): building them anew took about half as
// long as SQLite took to run them (a CPU profile of the server under bench:api's creates).

/** Reserves a task's credits and its place under the active-task limit, if both allow; the account's id when they did. */
const reserveCredits = compiledOnce<{ id: string }, [string, number, number]>(
  (db, accountId, cost, maxActiveTasks) =>
    db
      .updateTable('accounts')
      .set((eb) => ({
        credits_available: eb('credits_available', '-', cost),
        credits_reserved: eb('credits_reserved', '+', cost),
        active_tasks: eb('active_tasks', '+', sql.lit(1)),
      }))
      .where('id', '=', accountId)
      .where('active_tasks', '<', maxActiveTasks)
      .where('credits_available', '>=', cost)
      .returning('id'),
  3,
);

/** A new queued task; its other columns start empty (NULL, and 0 attempts: the schema's defaults). */
const insertQueuedTask = compiledOnce<unknown, [string, string, string, string, string, string, number, number]>(
  (db, id, accountId, imageUrl, subject, precision, outputFormat, credits, now) =>
    db
      .insertInto('tasks')
      .values({
        id,
        account_id: accountId,
        status: sql.lit('queued'),
        image_url: imageUrl,
        subject,
        precision,
        output_format: outputFormat,
        credits,
        attempts: sql.lit(0),
        created_at: now,
        updated_at: now,
      })
      .returningAll(),
  8,
);

/** The ledger's record of a reservation: `cost` moved from the spendable balance to the held one. */
const insertReservation = compiledOnce<never, [string, string, number, number, number]>(
  (db, accountId, taskId, availableDelta, reservedDelta, now) =>
    db
      .insertInto('credit_ledger')
      .values({ account_id: accountId, task_id: taskId, kind: sql.lit('reserve'), available_delta: availableDelta, reserved_delta: reservedDelta, created_at: now }),
  5,
);

async function findIdempotentTask(tx: Tx, accountId: string, key: string): Promise<{ fingerprint: string; task: Task } | undefined> {
  const row = await tx
    .selectFrom('idempotency_keys')
    .innerJoin('tasks', 'tasks.id', 'idempotency_keys.task_id')
    .selectAll('tasks')
    .select('idempotency_keys.fingerprint')
    .where('idempotency_keys.account_id', '=', accountId)
    .where('idempotency_keys.key', '=', key)
    .executeTakeFirst();
  return row ? { fingerprint: row.fingerprint, task: toTask(row) } : undefined;
}

/** Another account's task is indistinguishable from a missing one. */
const selectTaskForAccount = compiledOnce<unknown, [string, string]>(
  (db, taskId, accountId) => db.selectFrom('tasks').selectAll().where('id', '=', taskId).where('account_id', '=', accountId),
  2,
);

export async function findTaskForAccount(db: Db, taskId: string, accountId: string): Promise<Task | undefined> {
  // Ids come from URLs; one that newId could not have made names no task, and text PostgreSQL
  // refuses (a NUL) would otherwise fail the query instead of finding nothing.
  if (!isWellFormedId('bgr', taskId)) return undefined;
  const [row] = await selectTaskForAccount(db, taskId, accountId);
  return row ? toTask(row) : undefined;
}

export async function findTask(db: Db, taskId: string): Promise<Task | undefined> {
  const row = await db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirst();
  return row ? toTask(row) : undefined;
}
