// Every claim of a task writes its result file under a key of its own, `<task id>-<claim>.<format>`
// (storage/result-store.ts), so that an attempt that lost its lease cannot overwrite the file of
// the attempt that took over. `claims` numbers the claims; unlike `attempts` it never goes down
// (a released attempt gives its attempt back, not its number), so no two attempts share a key and
// retention can name every file a task's attempts may have left. The key of the winning attempt
// is the task's result_key, as before; tasks finished earlier keep theirs (`<task id>.<format>`).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('claims', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
