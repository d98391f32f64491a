// Each account counts its queued and processing tasks, so a create checks the active-task limit
// on its own row instead of counting task rows: that count grew with the queue and was the largest
// cost of a create on an account with a high limit (`npm run bench:api`). The count moves in the
// same statements that move the reserved credits, which it mirrors.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('active_tasks', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await sql`update accounts set active_tasks = (select count(*) from tasks where tasks.account_id = accounts.id and tasks.status in ('queued', 'processing'))`.execute(db);
}
