// First start on an empty data folder: one local paid account and a key, so a newcomer can call
// the API at once. The key is printed this one time and never stored in clear.
import type { Logger } from 'pino';
import { countAccounts, createAccount } from './store/accounts-repository.ts';
import { createApiKey } from './store/api-keys-repository.ts';
import type { Db } from './store/database.ts';

export const bootstrapCredits = 100;

export async function bootstrapLocalAccount(db: Db, logger: Logger, print: (text: string) => void): Promise<{ accountId: string; key: string } | undefined> {
  if ((await countAccounts(db)) > 0) return undefined;
  let account;
  try {
    account = await createAccount(db, { email: 'local@cutout.localhost', plan: 'paid', credits: bootstrapCredits });
  } catch (err) {
    // Several processes starting at once on an empty database: one of them creates the account.
    if ((await countAccounts(db)) > 0) return undefined;
    throw err;
  }
  const key = await createApiKey(db, account.id, 'bootstrap');
  logger.info({ accountId: account.id, keyId: key.id }, 'created the local account and its first API key');
  print(
    [
      '',
      `Created a local account (${account.id}, paid plan, ${bootstrapCredits} credits) and an API key.`,
      'This key is shown only now; keep it:',
      '',
      `    ${key.key}`,
      '',
    ].join('\n'),
  );
  return { accountId: account.id, key: key.key };
}
