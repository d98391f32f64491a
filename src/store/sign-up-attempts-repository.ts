// Sign-ups counted per client address, so that free credits and the "email taken" answer cannot
// be had without end (web/sign-up-throttle.ts).
import { sql } from 'kysely';
import { randomToken } from '../domain/ids.ts';
import { engineOf, inTransaction, type Db } from './database.ts';

export interface SignUpAllowance {
  /** The client's address as the limits count it (web/address-key.ts): an IPv6 client's is its /64. */
  ip: string;
  /** Sign-ups one address may make within the window. */
  limit: number;
  windowMs: number;
}

/** The attempt was counted and may go ahead, or when the address may try again. */
export type SignUpOutcome = { allowed: true } | { allowed: false; retryAt: number };

/**
 * Counts one sign-up against the address's allowance before the account is made, whatever then
 * becomes of it (a taken email counts too). The count and the insert are one transaction,
 * serialised per address (SQLite's write lock; a transaction advisory lock on PostgreSQL, where
 * READ COMMITTED would let parallel sign-ups each miss the others' rows), so a burst cannot pass
 * the limit together. A refused attempt records nothing: a script that keeps trying does not
 * keep the address blocked.
 */
export async function takeSignUpAttempt(db: Db, allowance: SignUpAllowance, now = Date.now()): Promise<SignUpOutcome> {
  // An attempt leaves the window at created_at + windowMs exactly, the moment a refusal names.
  const since = now - allowance.windowMs;
  return inTransaction(db, async (tx) => {
    if (engineOf(db) === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`sign-up-ip:${allowance.ip}`}, 0))`.execute(tx);
    }
    // The attempt whose ageing out brings the count below the limit, if the limit is reached: the
    // limit-th newest (the oldest one, unless a lowered limit left more in the window than it allows).
    const row = await tx
      .selectFrom('sign_up_attempts')
      .select('created_at')
      .where('ip', '=', allowance.ip)
      .where('created_at', '>', since)
      .orderBy('created_at', 'desc')
      .limit(1)
      .offset(allowance.limit - 1)
      .executeTakeFirst();
    if (row) return { allowed: false, retryAt: Number(row.created_at) + allowance.windowMs };
    await tx.insertInto('sign_up_attempts').values({ id: `sua_${randomToken(20)}`, ip: allowance.ip, created_at: now }).execute();
    return { allowed: true };
  });
}

export async function purgeSignUpAttempts(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('sign_up_attempts').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
