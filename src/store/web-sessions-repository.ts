// Browser sessions. The cookie holds a random token; the table holds only its SHA-256.
import { createHash, randomBytes } from 'node:crypto';
import { toAccount, type Account } from './accounts-repository.ts';
import type { Db } from './database.ts';

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export async function createSession(db: Db, accountId: string, ttlMs: number, now = Date.now()): Promise<{ token: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = now + ttlMs;
  await db.insertInto('web_sessions').values({ id: hashToken(token), account_id: accountId, created_at: now, expires_at: expiresAt }).execute();
  return { token, expiresAt };
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
