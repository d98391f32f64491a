// PostgreSQL's claim and heartbeat, each one statement and so one round trip. A heartbeat is safe
// to lose in a database crash (the lease may then expire early and the task be taken over, and the
// lease token fences the stale attempt), so it turns off the wait for the WAL flush for its own
// implicit transaction: set_config(…, true) lasts until that statement's commit, and the CTE that
// calls it is joined in so that it is evaluated. The claim waits for the flush: its number names
// the attempt's result file (`claims`, migration 004), and a claim lost in a crash would give the
// next attempt the same number and so the same file (`npm run bench:queue`: 1.55 ms of queue
// overhead per task with it, one claimer).
//
// The claim looks for its two kinds of candidate (the oldest queued task, the oldest expired lease)
// separately, so that each is one step down the (status, created_at) index: one query with an OR
// of the two made PostgreSQL scan and sort every queued row for every claim.
import { postgresPool, type Db } from './database.ts';

const claim = `
  with queued as (
    select id, created_at from tasks where status = 'queued'
    order by created_at limit 1 for update skip locked
  ),
  expired as (
    select id, created_at from tasks where status = 'processing' and lease_expires_at < $1 and attempts < $2
    order by created_at limit 1 for update skip locked
  ),
  picked as (
    select id from (select id, created_at from queued union all select id, created_at from expired) candidates
    order by created_at limit 1
  )
  update tasks
  set status = 'processing', attempts = tasks.attempts + 1, claims = tasks.claims + 1, lease_token = $3, lease_expires_at = $4, updated_at = $1
  from picked
  where tasks.id = picked.id
  returning tasks.*`;

const extend = `
  with relaxed as (select set_config('synchronous_commit', 'off', true) as setting)
  update tasks set lease_expires_at = $1
  from relaxed
  where id = $2 and lease_token = $3 and status = 'processing'
  returning id`;

export async function claimPostgres(db: Db, leaseToken: string, opts: { leaseMs: number; maxAttempts: number }, now: number): Promise<unknown> {
  const { rows } = await postgresPool(db).query({ name: 'cutout-claim', text: claim, values: [now, opts.maxAttempts, leaseToken, now + opts.leaseMs] });
  return rows[0];
}

export async function extendLeasePostgres(db: Db, taskId: string, leaseToken: string, leaseMs: number, now: number): Promise<boolean> {
  const { rows } = await postgresPool(db).query({ name: 'cutout-extend', text: extend, values: [now + leaseMs, taskId, leaseToken] });
  return rows.length === 1;
}
