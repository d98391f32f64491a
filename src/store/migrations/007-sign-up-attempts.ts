// Sign-ups counted per client address (store/sign-up-attempts-repository.ts): every new account
// gets free credits, so unthrottled sign-ups were free removals without end, and the "email taken"
// answer let a script test addresses for accounts. Only the address and the time are kept, not the
// email; web maintenance deletes rows older than a day, so the table stays small.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sign_up_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_up_attempts_ip').on('sign_up_attempts').columns(['ip', 'created_at']).execute();
}
