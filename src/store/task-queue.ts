// The worker's side of the tasks table: claims with a lease, heartbeats, and the two endings.
// Every state change after a claim is fenced on the lease token of that attempt, so a worker that
// lost its lease (it stalled, and another took the task over) can change nothing.
import { randomUUID } from 'node:crypto';
import type { TaskErrorCode } from '../domain/errors.ts';
import { engineOf, inTransaction, type Db, type Tx } from './database.ts';
import { endAttemptPostgres } from './end-attempt-postgres.ts';
import { claimPostgres, extendLeasePostgres } from './lease-postgres.ts';
import { toTask, type Task } from './task-row.ts';

export interface ClaimedTask {
  task: Task;
  leaseToken: string;
}

/**
 * Takes the oldest task that is queued, or processing under an expired lease (its worker died)
 * with attempts left. Tasks out of attempts are left for failAbandonedTasks.
 *
 * One statement, so one round trip: an UPDATE of the row a subquery picks. On PostgreSQL the
 * subquery locks its row with FOR UPDATE SKIP LOCKED: concurrent claimers each skip the rows others
 * are taking instead of queueing behind them, so N workers claim N different tasks at once (see
 * lease-postgres.ts). On SQLite the statement is atomic under the database's write lock.
 */
export async function claimNextTask(db: Db, opts: { leaseMs: number; maxAttempts: number }, now = Date.now()): Promise<ClaimedTask | undefined> {
  const leaseToken = randomUUID();
  if (engineOf(db) === 'postgres') {
    const row = await claimPostgres(db, leaseToken, opts, now);
    return row ? { task: toTask(row), leaseToken } : undefined;
  }
  const row = await db
    .updateTable('tasks')
    .set((eb) => ({
      status: 'processing',
      attempts: eb('attempts', '+', 1),
      claims: eb('claims', '+', 1),
      lease_token: leaseToken,
      lease_expires_at: now + opts.leaseMs,
      updated_at: now,
    }))
    .where('id', '=', (eb) =>
      eb
        .selectFrom('tasks')
        .select('id')
        .where((w) =>
          w.or([
            w('status', '=', 'queued'),
            w.and([w('status', '=', 'processing'), w('lease_expires_at', '<', now), w('attempts', '<', opts.maxAttempts)]),
          ]),
        )
        .orderBy('created_at')
        .limit(1),
    )
    .returningAll()
    .executeTakeFirst();
  return row ? { task: toTask(row), leaseToken } : undefined;
}

/** Extends the lease of the attempt the caller holds; false means the attempt is no longer ours. */
export async function extendLease(db: Db, taskId: string, leaseToken: string, leaseMs: number, now = Date.now()): Promise<boolean> {
  if (engineOf(db) === 'postgres') return extendLeasePostgres(db, taskId, leaseToken, leaseMs, now);
  const result = await db
    .updateTable('tasks')
    .set({ lease_expires_at: now + leaseMs })
    .where('id', '=', taskId)
    .where('lease_token', '=', leaseToken)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export interface TaskResult {
  key: string;
  width: number;
  height: number;
}

/** Marks success and turns the reservation into a charge, atomically. */
export async function completeTask(db: Db, taskId: string, leaseToken: string, result: TaskResult, now = Date.now()): Promise<boolean> {
  if (engineOf(db) === 'postgres') return endAttemptPostgres(db, taskId, leaseToken, { kind: 'charge', result }, now);
  return inTransaction(db, async (tx) => {
    const task = await heldTask(tx, taskId, leaseToken);
    if (!task) return false;
    await tx
      .updateTable('tasks')
      .set({
        status: 'succeeded',
        lease_token: null,
        lease_expires_at: null,
        result_key: result.key,
        result_width: result.width,
        result_height: result.height,
        updated_at: now,
        finished_at: now,
      })
      .where('id', '=', taskId)
      .execute();
    await settleReservation(tx, task, 'charge', now);
    return true;
  });
}

/** Marks failure and refunds the reservation, atomically. */
export async function failTask(
  db: Db,
  taskId: string,
  leaseToken: string,
  error: { code: TaskErrorCode; message: string },
  now = Date.now(),
): Promise<boolean> {
  if (engineOf(db) === 'postgres') return endAttemptPostgres(db, taskId, leaseToken, { kind: 'refund', error }, now);
  return inTransaction(db, async (tx) => {
    const task = await heldTask(tx, taskId, leaseToken);
    if (!task) return false;
    await markFailed(tx, task, error, now);
    return true;
  });
}

/**
 * Ends the attempt the caller holds without ending the task: queued again for any worker, the
 * attempt counted, so a task that meets the same trouble on every attempt still ends (failTask).
 */
export function requeueTask(db: Db, taskId: string, leaseToken: string, now = Date.now()): Promise<boolean> {
  return queueAgain(db, taskId, leaseToken, { attemptCounted: true }, now);
}

/**
 * Gives back the attempt the caller holds without spending it: the task is queued again for any
 * worker. Used when a worker shuts down before its task is done.
 */
export function releaseTask(db: Db, taskId: string, leaseToken: string, now = Date.now()): Promise<boolean> {
  return queueAgain(db, taskId, leaseToken, { attemptCounted: false }, now);
}

/** The held attempt ends and the task is queued for any worker; its claim had counted the attempt. */
async function queueAgain(db: Db, taskId: string, leaseToken: string, how: { attemptCounted: boolean }, now: number): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set((eb) => ({
      status: 'queued',
      ...(how.attemptCounted ? {} : { attempts: eb('attempts', '-', 1) }),
      lease_token: null,
      lease_expires_at: null,
      updated_at: now,
    }))
    .where('id', '=', taskId)
    .where('lease_token', '=', leaseToken)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Fails and refunds tasks whose workers died on every allowed attempt. Returns their ids. */
export async function failAbandonedTasks(db: Db, maxAttempts: number, now = Date.now()): Promise<string[]> {
  const postgres = engineOf(db) === 'postgres';
  return inTransaction(db, async (tx) => {
    const rows = await tx
      .selectFrom('tasks')
      .selectAll()
      .where('status', '=', 'processing')
      .where('lease_expires_at', '<', now)
      .where('attempts', '>=', maxAttempts)
      .$if(postgres, (q) => q.forUpdate().skipLocked())
      .execute();
    for (const row of rows) {
      const task = toTask(row);
      await markFailed(
        tx,
        task,
        { code: 'processing_failed', message: `The task was abandoned by a worker ${task.attempts} times and was given up; its credits were refunded.` },
        now,
      );
    }
    return rows.map((r) => r.id);
  });
}

/** The task row if the caller still holds this attempt (SQLite: under the write lock). */
async function heldTask(tx: Tx, taskId: string, leaseToken: string): Promise<Task | undefined> {
  const row = await tx
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', taskId)
    .where('lease_token', '=', leaseToken)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return row ? toTask(row) : undefined;
}

async function markFailed(tx: Tx, task: Task, error: { code: string; message: string }, now: number): Promise<void> {
  await tx
    .updateTable('tasks')
    .set({ status: 'failed', lease_token: null, lease_expires_at: null, error_code: error.code, error_message: error.message, updated_at: now, finished_at: now })
    .where('id', '=', task.id)
    .execute();
  await settleReservation(tx, task, 'refund', now);
}

async function settleReservation(tx: Tx, task: Task, kind: 'charge' | 'refund', now: number): Promise<void> {
  const cost = task.credits;
  const availableDelta = kind === 'refund' ? cost : 0;
  await tx
    .updateTable('accounts')
    .set((eb) => ({
      credits_available: eb('credits_available', '+', availableDelta),
      credits_reserved: eb('credits_reserved', '-', cost),
      active_tasks: eb('active_tasks', '-', 1),
    }))
    .where('id', '=', task.account_id)
    .execute();
  await tx
    .insertInto('credit_ledger')
    .values({ account_id: task.account_id, task_id: task.id, kind, available_delta: availableDelta, reserved_delta: -cost, created_at: now })
    .execute();
}
