import { z } from 'zod';
import { keyNameSchema } from '../domain/key-name.ts';
import { findAccount, type Account } from '../store/accounts-repository.ts';
import { createApiKey, deleteApiKey, listApiKeys, type ApiKeyInfo } from '../store/api-keys-repository.ts';
import type { Db } from '../store/database.ts';
import { parseFlags } from './args.ts';
import { CliError, report, warn } from './output.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function keyJson(k: ApiKeyInfo): Record<string, unknown> {
  return { id: k.id, account_id: k.accountId, name: k.name, prefix: k.prefix, created_at: iso(k.createdAt), last_used_at: iso(k.lastUsedAt) };
}

const accountFlags = { account: { type: 'string' }, json: { type: 'boolean' } } as const;

async function requireAccount(db: Db, id: string): Promise<Account> {
  const account = await findAccount(db, id);
  if (!account) throw new CliError(`no account ${id}`, 1, 'account_not_found');
  return account;
}

export async function keysCommand(db: Db, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'create') {
    const { values } = parseFlags(
      rest,
      { ...accountFlags, name: { type: 'string' } },
      z.object({ account: z.string().min(1), name: keyNameSchema.default('default'), json: z.boolean().default(false) }),
    );
    const account = await requireAccount(db, values.account);
    if (!account.apiAccess) {
      warn(
        `account ${account.id} has no API access (free plan, no purchase): the API refuses this key (403 api_access_required) until the account is on the paid plan or has a purchase (\`cutout credits grant --account ${account.id} --amount N --purchase\`)`,
      );
    }
    const key = await createApiKey(db, values.account, values.name);
    report(values.json, { ...keyJson(key), key: key.key }, `created key ${key.id} (${key.name}). Shown only now:\n\n    ${key.key}\n`);
    return;
  }
  if (sub === 'list') {
    const { values } = parseFlags(rest, accountFlags, z.object({ account: z.string().min(1), json: z.boolean().default(false) }));
    await requireAccount(db, values.account);
    const keys = await listApiKeys(db, values.account);
    const text = keys.length === 0 ? 'no keys' : keys.map((k) => `${k.id}  ${k.prefix}…  ${k.name}  created ${iso(k.createdAt)}  last used ${iso(k.lastUsedAt) ?? 'never'}`).join('\n');
    report(values.json, { account_id: values.account, keys: keys.map(keyJson) }, text);
    return;
  }
  if (sub === 'delete') {
    const { values, positionals } = parseFlags(rest, { json: { type: 'boolean' } }, z.object({ json: z.boolean().default(false) }), 1);
    const id = positionals[0];
    if (!id) throw new CliError('usage: cutout keys delete KEY_ID [--json]', 2);
    if (!(await deleteApiKey(db, id))) throw new CliError(`no active key ${id}`, 1, 'key_not_found');
    report(values.json, { id, deleted: true }, `deleted key ${id}; the API now refuses it`);
    return;
  }
  throw new CliError('usage: cutout keys create --account ID [--name NAME] [--json] | keys list --account ID [--json] | keys delete KEY_ID', 2);
}
