// Emails are compared without letter case: the web app always lower-cased them, the admin CLI kept
// them as typed, so one address could hold two accounts. From here every path stores and looks up
// the lower-case form (accounts-repository.ts). Existing rows are lower-cased too, except where
// two rows differ only in case: merging accounts (balances, keys, tasks) is an operator's decision,
// so those rows are left as they were, and a unique index on lower(email) - which they would make
// fail - is not added. The plain index below lets the sign-up check find any case twin quickly;
// the unique index on email still decides races, since new rows are all lower-case.
// (SQLite's lower() folds ASCII letters only; addresses with other capitals keep their case.)
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update accounts set email = lower(email)
    where email <> lower(email)
      and not exists (select 1 from accounts twin where lower(twin.email) = lower(accounts.email) and twin.id <> accounts.id)`.execute(db);
  await sql`create index if not exists accounts_email_lower on accounts (lower(email))`.execute(db);
}
