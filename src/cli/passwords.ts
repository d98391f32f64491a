// `cutout accounts set-password --email E [--json]`: gives an account a web-app password (one made
// with `accounts create` has none), or replaces a forgotten one and signs out its sessions. The
// password is read from standard input, never from the command line, where other users of the
// machine would see it in the process list and the shell would keep it in its history.
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { emailSchema } from '../domain/email.ts';
import { findAccountByEmail } from '../store/accounts-repository.ts';
import type { Db } from '../store/database.ts';
import { replacePassword } from '../store/web-accounts-repository.ts';
import { hashPassword, passwordMaxLength, passwordMinLength } from '../web/passwords.ts';
import { parseFlags } from './args.ts';
import { CliError, report } from './output.ts';

export const setPasswordUsage = 'usage: echo PASSWORD | cutout accounts set-password --email E [--json]';

export async function passwordCommand(db: Db, argv: string[], stdin: Readable = process.stdin): Promise<void> {
  const { values } = parseFlags(argv, { email: { type: 'string' }, json: { type: 'boolean' } }, z.object({ email: emailSchema, json: z.boolean().default(false) }));
  const password = await readPassword(stdin);
  if (password.length < passwordMinLength) throw new CliError(`the password needs at least ${passwordMinLength} characters (read from standard input; ${setPasswordUsage})`, 2);
  if (password.length > passwordMaxLength) throw new CliError(`the password may have at most ${passwordMaxLength} characters`, 2);
  const account = await findAccountByEmail(db, values.email);
  if (!account) throw new CliError(`no account with email ${values.email}`, 1, 'account_not_found');
  await replacePassword(db, account.id, await hashPassword(password));
  report(values.json, { id: account.id, email: account.email, password_set: true }, `password set for ${account.id}  ${account.email}`);
}

/** All of standard input, less the one line end `echo` or a here-string adds. */
async function readPassword(stdin: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer | string));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
