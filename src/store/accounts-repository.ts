import { z } from 'zod';
import { emailMaxLength, emailTooLongMessage, normaliseEmail } from '../domain/email.ts';
import { newId } from '../domain/ids.ts';
import { inTransaction, type Db, type Tx } from './database.ts';
import { sql, type Selectable } from 'kysely';
import type { CreditLedgerTable, LedgerKind } from './schema.ts';

const accountRow = z.object({
  id: z.string(),
  email: z.string(),
  plan: z.enum(['free', 'paid']),
  has_purchase: z.coerce.number(),
  credits_available: z.coerce.number().int().min(0),
  credits_reserved: z.coerce.number().int().min(0),
  created_at: z.coerce.number(),
});

export interface Account {
  id: string;
  email: string;
  plan: 'free' | 'paid';
  apiAccess: boolean;
  creditsAvailable: number;
  creditsReserved: number;
  createdAt: number;
}

export function toAccount(row: unknown): Account {
  const r = accountRow.parse(row);
  return {
    id: r.id,
    email: r.email,
    plan: r.plan,
    apiAccess: r.plan === 'paid' || r.has_purchase === 1,
    creditsAvailable: r.credits_available,
    creditsReserved: r.credits_reserved,
    createdAt: r.created_at,
  };
}

export class EmailTakenError extends Error {
  readonly code = 'email_taken';
}

/** Callers validate the address's form; the store refuses only what it cannot index (see emailMaxLength). */
export class InvalidEmailError extends Error {
  readonly code = 'invalid_email';
}

/**
 * The most credits one account holds, available and reserved together: balances are PostgreSQL
 * integers, and SQLite is held to the same bound so both engines accept the same grants. Counting
 * the reserved credits too means a refund can never push the available balance past it.
 */
export const maxCredits = 2_147_483_647;

export class CreditLimitError extends Error {
  readonly code = 'credit_limit_exceeded';
}

export async function createAccount(
  db: Db,
  input: { email: string; plan: 'free' | 'paid'; credits: number },
  now = Date.now(),
  /** More rows that belong to the new account, written in the same transaction (e.g. its password). */
  alongside?: (tx: Tx, accountId: string) => Promise<void>,
): Promise<Account> {
  const email = normaliseEmail(input.email);
  if (email.length > emailMaxLength) throw new InvalidEmailError(emailTooLongMessage);
  const id = newId('acct');
  return inTransaction(db, async (tx) => {
    const taken = new EmailTakenError(`an account with email ${email} already exists`);
    // lower(email) also finds a case twin made before emails were lower-cased (migration 006).
    const existing = await tx.selectFrom('accounts').select('id').where(sql<string>`lower(email)`, '=', email).executeTakeFirst();
    if (existing) throw taken;
    // On PostgreSQL a concurrent sign-up with the same email can commit between the check and the
    // insert (READ COMMITTED); the unique index then decides, and its refusal means the same.
    await tx
      .insertInto('accounts')
      .values({ id, email, plan: input.plan, has_purchase: 0, credits_available: 0, credits_reserved: 0, created_at: now })
      .execute()
      .catch((err: unknown) => {
        throw isEmailUniqueViolation(err) ? taken : err;
      });
    if (input.credits > 0) await addCredits(tx, id, input.credits, 'grant', now);
    await alongside?.(tx, id);
    return loadAccount(tx, id);
  });
}

export async function findAccount(db: Db, id: string): Promise<Account | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toAccount(row) : undefined;
}

/** The account of an address, in any letter case. */
export async function findAccountByEmail(db: Db, email: string): Promise<Account | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('email', '=', normaliseEmail(email)).executeTakeFirst();
  return row ? toAccount(row) : undefined;
}

export async function countAccounts(db: Db): Promise<number> {
  const row = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export class AccountNotFoundError extends Error {
  readonly code = 'account_not_found';
}

/** A grant from an operator, or a recorded purchase, which also unlocks API access. */
export async function grantCredits(
  db: Db,
  accountId: string,
  amount: number,
  purchase: boolean,
  now = Date.now(),
): Promise<Account> {
  return inTransaction(db, async (tx) => {
    const found = await tx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
    if (!found) throw new AccountNotFoundError(`no account ${accountId}`);
    await addCredits(tx, accountId, amount, purchase ? 'purchase' : 'grant', now);
    if (purchase) await tx.updateTable('accounts').set({ has_purchase: 1 }).where('id', '=', accountId).execute();
    return loadAccount(tx, accountId);
  });
}

const uniqueViolation = z.union([
  z.object({ code: z.literal('SQLITE_CONSTRAINT_UNIQUE'), message: z.string().includes('accounts.email') }),
  z.object({ code: z.literal('23505'), constraint: z.literal('accounts_email_key') }),
]);

function isEmailUniqueViolation(err: unknown): boolean {
  return uniqueViolation.safeParse(err).success;
}

/** The account must exist; a grant past maxCredits changes nothing. */
async function addCredits(tx: Tx, accountId: string, amount: number, kind: LedgerKind, now: number): Promise<void> {
  const refused = new CreditLimitError(
    `granting ${amount} credits would take account ${accountId} past ${maxCredits} credits (available and reserved together), the most an account can hold`,
  );
  if (amount > maxCredits) throw refused;
  // The bound is compared as available <= (maxCredits - amount) - reserved, where no step can
  // overflow PostgreSQL's integer, even for an account whose balance reached the bound before it
  // was enforced (available + reserved would).
  const result = await tx
    .updateTable('accounts')
    .set((eb) => ({ credits_available: eb('credits_available', '+', amount) }))
    .where('id', '=', accountId)
    .where((eb) => eb('credits_available', '<=', eb(eb.val(maxCredits - amount), '-', eb.ref('credits_reserved'))))
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw refused;
  await tx
    .insertInto('credit_ledger')
    .values({ account_id: accountId, task_id: null, kind, available_delta: amount, reserved_delta: 0, created_at: now })
    .execute();
}

async function loadAccount(tx: Tx, id: string): Promise<Account> {
  return toAccount(await tx.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
}

export interface LedgerEntry {
  id: number;
  kind: LedgerKind;
  taskId: string | null;
  availableDelta: number;
  reservedDelta: number;
  createdAt: number;
}

export async function listLedger(db: Db, accountId: string): Promise<LedgerEntry[]> {
  const rows = await db.selectFrom('credit_ledger').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map(toLedgerEntry);
}

/**
 * One page of the ledger, newest first, from the entry before `beforeId` (the newest when
 * undefined); `more` says whether older entries follow. A busy account has entries without end,
 * so a page is what is read, never the whole ledger.
 */
export async function listLedgerPage(db: Db, accountId: string, page: { limit: number; beforeId: number | undefined }): Promise<{ entries: LedgerEntry[]; more: boolean }> {
  let query = db.selectFrom('credit_ledger').selectAll().where('account_id', '=', accountId);
  if (page.beforeId !== undefined) query = query.where('id', '<', page.beforeId);
  const rows = await query.orderBy('id', 'desc').limit(page.limit + 1).execute();
  return { entries: rows.slice(0, page.limit).map(toLedgerEntry), more: rows.length > page.limit };
}

function toLedgerEntry(r: Selectable<CreditLedgerTable>): LedgerEntry {
  return {
    id: Number(r.id),
    kind: r.kind,
    taskId: r.task_id,
    availableDelta: Number(r.available_delta),
    reservedDelta: Number(r.reserved_delta),
    createdAt: Number(r.created_at),
  };
}
