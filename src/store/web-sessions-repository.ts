// Browser sessions. The cookie holds a random token; the table holds only its SHA-256.
import { hash, randomBytes } from 'node:crypto';
import { toAccount, type Account } from './accounts-repository.ts';
import { engineOf, inTransaction, type Db } from './database.ts';

const hashToken = (token: string): string => hash('sha256', token, 'hex');

/**
 * A session for the account whose password was just checked against `passwordHash`, or undefined
 * when that is no longer its password. A reset (replacePassword) ends every session in the
 * transaction that changes the password, so a sign-in that read the old hash before the reset
 * committed must not add one after its delete: the hash is read again here, under a lock that
 * waits for a reset in progress (FOR SHARE on PostgreSQL; SQLite's write lock, which the
 * transaction holds from its start), and a reset that comes later waits for this session, then
 * deletes it.
 */
export async function createSession(
  db: Db,
  credentials: { accountId: string; passwordHash: string },
  ttlMs: number,
  now = Date.now(),
): Promise<{ token: string; expiresAt: number } | undefined> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = now + ttlMs;
  return inTransaction(db, async (tx) => {
    const current = await tx
      .selectFrom('web_credentials')
      .select('password_hash')
      .where('account_id', '=', credentials.accountId)
      .$if(engineOf(db) === 'postgres', (q) => q.forShare())
      .executeTakeFirst();
    if (current?.password_hash !== credentials.passwordHash) return undefined;
    await tx.insertInto('web_sessions').values({ id: hashToken(token), account_id: credentials.accountId, created_at: now, expires_at: expiresAt }).execute();
    return { token, expiresAt };
  });
}

/** The signed-in account, or undefined for an unknown or expired session. */
export async function findSessionAccount(db: Db, token: string, now = Date.now()): Promise<Account | undefined> {
  const row = await db
    .selectFrom('web_sessions')
    .innerJoin('accounts', 'accounts.id', 'web_sessions.account_id')
    .selectAll('accounts')
    .where('web_sessions.id', '=', hashToken(token))
    .where('web_sessions.expires_at', '>', now)
    .executeTakeFirst();
  return row ? toAccount(row) : undefined;
}

export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.deleteFrom('web_sessions').where('id', '=', hashToken(token)).execute();
}

export async function purgeExpiredSessions(db: Db, now = Date.now()): Promise<number> {
  const result = await db.deleteFrom('web_sessions').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
