// PostgreSQL's way to end an attempt: the task update, the balance change and the ledger entry in
// one statement (data-modifying CTEs), so one round trip instead of a transaction of five, run as a
// named prepared statement (see postgresPool). The fence is the UPDATE's own WHERE: under a
// concurrent takeover PostgreSQL waits for the row lock and re-checks the lease token on the newest
// row version, so a stale attempt matches no row, and then neither the balance nor the ledger is
// touched.
import { postgresPool, type Db } from './database.ts';

export type AttemptEnding =
  | { kind: 'charge'; result: { key: string; width: number; height: number } }
  | { kind: 'refund'; error: { code: string; message: string } };

/** The statement for one kind of ending: a charge keeps the reservation's credits, a refund returns them. */
function endingStatement(kind: AttemptEnding['kind']): string {
  const status = kind === 'charge' ? 'succeeded' : 'failed';
  const refund = kind === 'charge' ? '0' : 'ended.credits';
  return `
    with ended as (
      update tasks
      set status = '${status}', lease_token = null, lease_expires_at = null,
          result_key = $3, result_width = $4, result_height = $5, error_code = $6, error_message = $7,
          updated_at = $8, finished_at = $8
      where id = $1 and lease_token = $2 and status = 'processing'
      returning id, account_id, credits
    ), settled as (
      update accounts
      set credits_available = credits_available + ${refund}, credits_reserved = credits_reserved - ended.credits,
          active_tasks = active_tasks - 1
      from ended
      where accounts.id = ended.account_id
    )
    insert into credit_ledger (account_id, task_id, kind, available_delta, reserved_delta, created_at)
    select ended.account_id, ended.id, '${kind}', ${refund}, -ended.credits, $8 from ended
    returning id`;
}

const statements = { charge: endingStatement('charge'), refund: endingStatement('refund') };

export async function endAttemptPostgres(db: Db, taskId: string, leaseToken: string, ending: AttemptEnding, now: number): Promise<boolean> {
  const result = ending.kind === 'charge' ? ending.result : undefined;
  const error = ending.kind === 'refund' ? ending.error : undefined;
  const values = [taskId, leaseToken, result?.key ?? null, result?.width ?? null, result?.height ?? null, error?.code ?? null, error?.message ?? null, now];
  const { rows } = await postgresPool(db).query({ name: `cutout-end-${ending.kind}`, text: statements[ending.kind], values });
  return rows.length === 1;
}
