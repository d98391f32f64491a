// The web app's tables: password credentials, browser sessions, sign-in attempts, and what a task
// made in the browser carries beyond the API's columns. Types are the portable subset
// (text, integer, bigint) so the same migration runs on SQLite and PostgreSQL.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('web_credentials')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('web_sessions')
    // SHA-256 of the cookie's token: a copy of the table cannot be replayed as cookies.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_sessions_account').on('web_sessions').column('account_id').execute();
  await db.schema.createIndex('web_sessions_expires').on('web_sessions').column('expires_at').execute();

  await db.schema
    .createTable('sign_in_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('succeeded', 'integer', (c) => c.notNull().check(sql`succeeded in (0, 1)`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_attempts_email').on('sign_in_attempts').columns(['email', 'created_at']).execute();
  await db.schema.createIndex('sign_in_attempts_ip').on('sign_in_attempts').columns(['ip', 'created_at']).execute();

  await db.schema
    .createTable('web_task_sources')
    .addColumn('task_id', 'text', (c) => c.primaryKey().references('tasks.id'))
    // An uploaded file under the data folder's uploads/; null when the task fetches its image_url.
    .addColumn('upload_key', 'text')
    // Free-plan web previews are made from the source scaled down to this many pixels.
    .addColumn('max_pixels', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_task_sources_upload').on('web_task_sources').column('upload_key').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['web_task_sources', 'sign_in_attempts', 'web_sessions', 'web_credentials']) {
    await db.schema.dropTable(table).execute();
  }
}
