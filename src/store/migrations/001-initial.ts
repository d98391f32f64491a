import { type Kysely, sql } from 'kysely';
import { autoIncrementId } from './portable.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('plan', 'text', (c) => c.notNull().check(sql`plan in ('free', 'paid')`))
    .addColumn('has_purchase', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('credits_available', 'integer', (c) => c.notNull().defaultTo(0).check(sql`credits_available >= 0`))
    .addColumn('credits_reserved', 'integer', (c) => c.notNull().defaultTo(0).check(sql`credits_reserved >= 0`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('image_url', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('precision', 'text', (c) => c.notNull())
    .addColumn('output_format', 'text', (c) => c.notNull())
    .addColumn('credits', 'integer', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_token', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('result_key', 'text')
    .addColumn('result_width', 'integer')
    .addColumn('result_height', 'integer')
    .addColumn('result_deleted_at', 'bigint')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('tasks_account_status').on('tasks').columns(['account_id', 'status']).execute();
  await db.schema.createIndex('tasks_status_created').on('tasks').columns(['status', 'created_at']).execute();

  await db.schema
    .createTable('credit_ledger')
    .$call(autoIncrementId(db))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('task_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('available_delta', 'integer', (c) => c.notNull())
    .addColumn('reserved_delta', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('credit_ledger_account').on('credit_ledger').columns(['account_id', 'id']).execute();
  // A task is reserved, charged and refunded at most once each: the database itself refuses a double charge.
  await db.schema
    .createIndex('credit_ledger_task_kind')
    .on('credit_ledger')
    .columns(['task_id', 'kind'])
    .unique()
    .where(sql.ref('task_id'), 'is not', null)
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['idempotency_keys', 'credit_ledger', 'tasks', 'api_keys', 'accounts']) {
    await db.schema.dropTable(table).execute();
  }
}
