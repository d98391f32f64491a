// Password credentials of web accounts and the sign-in attempts that throttle guessing.
import { z } from 'zod';
import { randomToken } from '../domain/ids.ts';
import { createAccount, type Account } from './accounts-repository.ts';
import type { Db, Tx } from './database.ts';

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
    .where('accounts.email', '=', email)
    .executeTakeFirst();
  if (!row) return undefined;
  const r = credentialRow.parse(row);
  return { accountId: r.account_id, passwordHash: r.password_hash };
}

export async function recordSignInAttempt(db: Db, attempt: { email: string; ip: string; succeeded: boolean }, now = Date.now()): Promise<void> {
  await db
    .insertInto('sign_in_attempts')
    .values({ id: `att_${randomToken(20)}`, email: attempt.email, ip: attempt.ip, succeeded: attempt.succeeded ? 1 : 0, created_at: now })
    .execute();
}

/** Failed attempts since `since` for this email and for this address, counted apart. */
export async function countRecentFailures(db: Db, email: string, ip: string, since: number): Promise<{ email: number; ip: number }> {
  const count = async (column: 'email' | 'ip', value: string): Promise<number> => {
    const row = await db
      .selectFrom('sign_in_attempts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(column, '=', value)
      .where('succeeded', '=', 0)
      .where('created_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return { email: await count('email', email), ip: await count('ip', ip) };
}

/** A success clears the failures of that email, so its owner is not locked out by their own typos. */
export async function clearFailures(db: Db, email: string): Promise<void> {
  await db.deleteFrom('sign_in_attempts').where('email', '=', email).where('succeeded', '=', 0).execute();
}

export async function purgeSignInAttempts(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('sign_in_attempts').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
