// PostgreSQL's way to end an attempt: the task update, the balance change and the ledger entry in
// one statement (data-modifying CTEs), so one round trip instead of a transaction of five. The
// fence is the UPDATE's own WHERE: under a concurrent takeover PostgreSQL waits for the row lock
// and re-checks the lease token on the newest row version, so a stale attempt matches no row, and
// then neither the balance nor the ledger is touched.
import { sql } from 'kysely';
import type { Db } from './database.ts';

export type AttemptEnding =
  | { kind: 'charge'; result: { key: string; width: number; height: number } }
  | { kind: 'refund'; error: { code: string; message: string } };

export async function endAttemptPostgres(db: Db, taskId: string, leaseToken: string, ending: AttemptEnding, now: number): Promise<boolean> {
  const succeeded = ending.kind === 'charge';
  const result = succeeded ? ending.result : undefined;
  const error = succeeded ? undefined : ending.error;
  const refund = succeeded ? sql`0` : sql`ended.credits`;
  const { rows } = await sql<{ id: number }>`
    with ended as (
      update tasks
      set status = ${succeeded ? 'succeeded' : 'failed'}, lease_token = null, lease_expires_at = null,
          result_key = ${result?.key ?? null}, result_width = ${result?.width ?? null}, result_height = ${result?.height ?? null},
          error_code = ${error?.code ?? null}, error_message = ${error?.message ?? null},
          updated_at = ${now}, finished_at = ${now}
      where id = ${taskId} and lease_token = ${leaseToken} and status = 'processing'
      returning id, account_id, credits
    ), settled as (
      update accounts
      set credits_available = credits_available + ${refund}, credits_reserved = credits_reserved - ended.credits,
          active_tasks = active_tasks - 1
      from ended
      where accounts.id = ended.account_id
    )
    insert into credit_ledger (account_id, task_id, kind, available_delta, reserved_delta, created_at)
    select ended.account_id, ended.id, ${ending.kind}::text, ${refund}, -ended.credits, ${now}::bigint from ended
    returning id`.execute(db);
  return rows.length === 1;
}
