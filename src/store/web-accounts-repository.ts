// Password credentials of web accounts and the sign-in attempts that throttle guessing.
import { sql } from 'kysely';
import { z } from 'zod';
import { normaliseEmail } from '../domain/email.ts';
import { randomToken } from '../domain/ids.ts';
import { createAccount, type Account } from './accounts-repository.ts';
import { engineOf, inTransaction, type Db, type Tx } from './database.ts';

export async function createWebAccount(
  db: Db,
  input: { email: string; passwordHash: string; credits: number },
  now = Date.now(),
): Promise<Account> {
  // One transaction: an account is never left without the password it was created with.
  return createAccount(db, { email: input.email, plan: 'free', credits: input.credits }, now, (tx, accountId) =>
    setPasswordHash(tx, accountId, input.passwordHash, now),
  );
}

/**
 * A new password (an operator's reset) ends every session of the account in the same transaction:
 * whoever signed in with the old one, perhaps the reason for the reset, is signed out.
 */
export async function replacePassword(db: Db, accountId: string, passwordHash: string, now = Date.now()): Promise<void> {
  await inTransaction(db, async (tx) => {
    await setPasswordHash(tx, accountId, passwordHash, now);
    await tx.deleteFrom('web_sessions').where('account_id', '=', accountId).execute();
  });
}

export async function setPasswordHash(db: Db | Tx, accountId: string, passwordHash: string, now = Date.now()): Promise<void> {
  await db
    .insertInto('web_credentials')
    .values({ account_id: accountId, password_hash: passwordHash, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ password_hash: passwordHash, updated_at: now }))
    .execute();
}

const credentialRow = z.object({ account_id: z.string(), password_hash: z.string() });

export async function findCredentialsByEmail(db: Db, email: string): Promise<{ accountId: string; passwordHash: string } | undefined> {
  const row = await db
    .selectFrom('web_credentials')
    .innerJoin('accounts', 'accounts.id', 'web_credentials.account_id')
    .select(['web_credentials.account_id', 'web_credentials.password_hash'])
    .where('accounts.email', '=', normaliseEmail(email))
    .executeTakeFirst();
  if (!row) return undefined;
  const r = credentialRow.parse(row);
  return { accountId: r.account_id, passwordHash: r.password_hash };
}

export interface GuessAllowance {
  email: string;
  /** The client's address as the limits count it (web/address-key.ts): an IPv6 client's is its /64. */
  ip: string;
  /** Failures one email may have within the window. */
  emailLimit: number;
  /** Failures one address may have within the window, over all emails. */
  ipLimit: number;
  windowMs: number;
}

/** A guess that may be checked (its attempt is already counted as a failure), or when the lock lifts. */
export type GuessOutcome = { allowed: true; attemptId: string } | { allowed: false; retryAt: number };

/**
 * Takes one guess from the window's allowance before the password is checked. The guess is counted
 * as a failure first and only a success takes it back, so a burst of parallel guesses cannot all
 * pass the count while the slow hash runs: the count and the insert are one transaction, serialised
 * per email and per address (SQLite's write lock; transaction advisory locks on PostgreSQL, where
 * READ COMMITTED would otherwise let each insert miss the others). A refused guess records nothing, so guessing at
 * a locked email does not keep it locked.
 */
export async function takeSignInGuess(db: Db, allowance: GuessAllowance, now = Date.now()): Promise<GuessOutcome> {
  // A failure leaves the window at created_at + windowMs exactly, the moment a refusal names.
  const since = now - allowance.windowMs;
  return inTransaction(db, async (tx) => {
    if (engineOf(db) === 'postgres') {
      // Both limits are counted here, so both keys are locked: the email's, then the address's (in
      // that order on every path, so two guesses never wait on each other's second lock).
      await sql`select pg_advisory_xact_lock(hashtextextended(${`sign-in:${allowance.email}`}, 0))`.execute(tx);
      await sql`select pg_advisory_xact_lock(hashtextextended(${`sign-in-ip:${allowance.ip}`}, 0))`.execute(tx);
    }
    const retryAt = Math.max(
      await lockedUntil(tx, 'email', allowance.email, allowance.emailLimit, since),
      await lockedUntil(tx, 'ip', allowance.ip, allowance.ipLimit, since),
    );
    if (retryAt > 0) return { allowed: false, retryAt: retryAt + allowance.windowMs };
    const attemptId = `att_${randomToken(20)}`;
    await tx.insertInto('sign_in_attempts').values({ id: attemptId, email: allowance.email, ip: allowance.ip, succeeded: 0, created_at: now }).execute();
    return { allowed: true, attemptId };
  });
}

/**
 * 0 while fewer than `limit` failures are in the window; else the time of the failure whose ageing
 * out brings the count below the limit again: the limit-th newest (the oldest one when the count is
 * at the limit). One statement, so a success clearing the failures meanwhile cannot leave a count
 * that no longer has its row.
 */
async function lockedUntil(tx: Tx, column: 'email' | 'ip', value: string, limit: number, since: number): Promise<number> {
  const row = await tx
    .selectFrom('sign_in_attempts')
    .select('created_at')
    .where(column, '=', value)
    .where('succeeded', '=', 0)
    .where('created_at', '>', since)
    .orderBy('created_at', 'desc')
    .limit(1)
    .offset(limit - 1)
    .executeTakeFirst();
  return row ? Number(row.created_at) : 0;
}

/** The guess was right: it is recorded as a success, and that email's failures are cleared so its owner is not locked out by their own typos. */
export async function markSignInSucceeded(db: Db, attempt: { attemptId: string; email: string }): Promise<void> {
  await inTransaction(db, async (tx) => {
    await tx.updateTable('sign_in_attempts').set({ succeeded: 1 }).where('id', '=', attempt.attemptId).execute();
    await tx.deleteFrom('sign_in_attempts').where('email', '=', attempt.email).where('succeeded', '=', 0).execute();
  });
}

export async function purgeSignInAttempts(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('sign_in_attempts').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
