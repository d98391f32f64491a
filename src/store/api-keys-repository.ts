import { hash } from 'node:crypto';
import { newId, randomToken } from '../domain/ids.ts';
import { compiledOnce } from './compiled-once.ts';
import type { Db } from './database.ts';
import { toAccount, type Account } from './accounts-repository.ts';

// Keys carry ~190 bits of randomness, so a plain SHA-256 is enough to store them: there is
// nothing to brute-force that a slow hash would protect.
const keyPattern = /^cut_[0-9a-z]{37}$/;
const visiblePrefixLength = 12;
// Writing last_used_at on every request would turn each poll into a write; a minute is precise enough.
const lastUsedResolutionMs = 60_000;

// One-shot hash: a third of the time of createHash().update().digest() for a key (every API request hashes one).
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function isWellFormedApiKey(key: string): boolean {
  return keyPattern.test(key);
}

export interface ApiKeyInfo {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export async function createApiKey(db: Db, accountId: string, name: string, now = Date.now()): Promise<ApiKeyInfo & { key: string }> {
  const key = `cut_${randomToken(37)}`;
  const info: ApiKeyInfo = { id: newId('key'), accountId, name, prefix: key.slice(0, visiblePrefixLength), createdAt: now, lastUsedAt: null };
  await db
    .insertInto('api_keys')
    .values({ id: info.id, account_id: accountId, name, prefix: info.prefix, key_hash: hashApiKey(key), created_at: now, last_used_at: null, deleted_at: null })
    .execute();
  return { ...info, key };
}

export async function listApiKeys(db: Db, accountId: string): Promise<ApiKeyInfo[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    prefix: r.prefix,
    createdAt: Number(r.created_at),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
  }));
}

/** Soft delete: the row stays for audit, the key stops working at once. */
export async function deleteApiKey(db: Db, keyId: string, now = Date.now()): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ deleted_at: now }).where('id', '=', keyId).where('deleted_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

const selectLiveKey = compiledOnce<Record<string, unknown> & { key_id: string; last_used_at: number | null }, [string]>(
  (db, keyHash) =>
    db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .selectAll('accounts')
      .select(['api_keys.id as key_id', 'api_keys.last_used_at'])
      .where('api_keys.key_hash', '=', keyHash)
      .where('api_keys.deleted_at', 'is', null),
  1,
);

export async function authenticateApiKey(db: Db, key: string, now = Date.now()): Promise<{ keyId: string; account: Account } | undefined> {
  if (!isWellFormedApiKey(key)) return undefined;
  const [row] = await selectLiveKey(db, hashApiKey(key));
  if (!row) return undefined;
  if (row.last_used_at === null || Number(row.last_used_at) < now - lastUsedResolutionMs) {
    await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', row.key_id).execute();
  }
  return { keyId: row.key_id, account: toAccount(row) };
}
