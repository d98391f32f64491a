// PostgreSQL's claim and heartbeat, each one statement and so one round trip. Both are writes that
// are safe to lose in a database crash (a lost claim or heartbeat means some work is done again,
// and the lease token fences the stale attempt), so each turns off the wait for the WAL flush for
// its own implicit transaction: set_config(…, true) lasts until that statement's commit, and the
// CTE that calls it is joined in so that it is evaluated. The flush and the extra round trips of an
// explicit transaction are most of a small write's cost.
import { sql } from 'kysely';
import type { Db } from './database.ts';

export async function claimPostgres(db: Db, leaseToken: string, opts: { leaseMs: number; maxAttempts: number }, now: number): Promise<unknown> {
  const { rows } = await sql`
    with relaxed as (select set_config('synchronous_commit', 'off', true) as setting),
    picked as (
      select id from tasks
      where status = 'queued' or (status = 'processing' and lease_expires_at < ${now} and attempts < ${opts.maxAttempts})
      order by created_at
      limit 1
      for update skip locked
    )
    update tasks
    set status = 'processing', attempts = tasks.attempts + 1, lease_token = ${leaseToken},
        lease_expires_at = ${now + opts.leaseMs}, updated_at = ${now}
    from picked, relaxed
    where tasks.id = picked.id
    returning tasks.*`.execute(db);
  return rows[0];
}

export async function extendLeasePostgres(db: Db, taskId: string, leaseToken: string, leaseMs: number, now: number): Promise<boolean> {
  const { rows } = await sql`
    with relaxed as (select set_config('synchronous_commit', 'off', true) as setting)
    update tasks set lease_expires_at = ${now + leaseMs}
    from relaxed
    where id = ${taskId} and lease_token = ${leaseToken} and status = 'processing'
    returning id`.execute(db);
  return rows.length === 1;
}
