// Requests counted per API key and fixed one-minute window, for the rate limit shared by every API
// process on one PostgreSQL database (store/rate-windows-repository.ts). A single-process SQLite
// server counts in memory instead; the table is made there too, so both engines keep one schema.
// Rows are few (the keys active in the last two minutes) and removed as minutes pass.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_windows')
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_windows_pk', ['api_key_id', 'window_start'])
    .execute();
}
