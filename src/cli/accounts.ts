import { z } from 'zod';
import { emailSchema } from '../domain/email.ts';
import type { Account } from '../store/accounts-repository.ts';
import { AccountNotFoundError, createAccount, CreditLimitError, EmailTakenError, findAccount, grantCredits, InvalidEmailError, maxCredits } from '../store/accounts-repository.ts';
import type { Db } from '../store/database.ts';
import { parseFlags, wholeNumber } from './args.ts';
import { CliError, report } from './output.ts';

export function accountJson(a: Account): Record<string, unknown> {
  return {
    id: a.id,
    email: a.email,
    plan: a.plan,
    api_access: a.apiAccess,
    credits: a.creditsAvailable,
    credits_reserved: a.creditsReserved,
    created_at: new Date(a.createdAt).toISOString(),
  };
}

const accountText = (a: Account): string =>
  `${a.id}  ${a.email}  plan=${a.plan}  api_access=${a.apiAccess}  credits=${a.creditsAvailable} (+${a.creditsReserved} reserved)`;

export async function accountsCommand(db: Db, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'create') {
    const { values } = parseFlags(
      rest,
      { email: { type: 'string' }, plan: { type: 'string' }, credits: { type: 'string' }, json: { type: 'boolean' } },
      z.object({
        email: emailSchema,
        plan: z.enum(['free', 'paid']).default('free'),
        credits: wholeNumber(0).default(0),
        json: z.boolean().default(false),
      }),
    );
    try {
      const account = await createAccount(db, { email: values.email, plan: values.plan, credits: values.credits });
      report(values.json, accountJson(account), `created ${accountText(account)}`);
    } catch (err) {
      if (err instanceof EmailTakenError || err instanceof InvalidEmailError) throw new CliError(err.message, 1, err.code);
      // The repository's message names the account it was creating, which was rolled back.
      if (err instanceof CreditLimitError) {
        throw new CliError(`--credits ${values.credits} is more than an account can hold (${maxCredits}, available and reserved together); no account was created`, 1, err.code);
      }
      throw err;
    }
    return;
  }
  if (sub === 'show') {
    const { values, positionals } = parseFlags(rest, { json: { type: 'boolean' } }, z.object({ json: z.boolean().default(false) }), 1);
    const id = positionals[0];
    if (!id) throw new CliError('usage: cutout accounts show ID [--json]', 2);
    const account = await findAccount(db, id);
    if (!account) throw new CliError(`no account ${id}`, 1, 'account_not_found');
    report(values.json, accountJson(account), accountText(account));
    return;
  }
  throw new CliError('usage: cutout accounts create --email E [--plan free|paid] [--credits N] [--json] | cutout accounts show ID [--json]', 2);
}

export async function creditsCommand(db: Db, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub !== 'grant') throw new CliError('usage: cutout credits grant --account ID --amount N [--purchase] [--json]', 2);
  const { values } = parseFlags(
    rest,
    { account: { type: 'string' }, amount: { type: 'string' }, purchase: { type: 'boolean' }, json: { type: 'boolean' } },
    z.object({
      account: z.string().min(1),
      amount: wholeNumber(1),
      purchase: z.boolean().default(false),
      json: z.boolean().default(false),
    }),
  );
  try {
    const account = await grantCredits(db, values.account, values.amount, values.purchase);
    report(
      values.json,
      { ...accountJson(account), granted: values.amount, purchase: values.purchase },
      `${values.purchase ? 'recorded a purchase of' : 'granted'} ${values.amount} credits: ${accountText(account)}`,
    );
  } catch (err) {
    if (err instanceof AccountNotFoundError || err instanceof CreditLimitError) throw new CliError(err.message, 1, err.code);
    throw err;
  }
}
