// An upload is recorded here before its bytes are stored, and the record is removed in the
// transaction that creates its task (which then owns it through web_task_sources). A record left
// behind names a file no task will ever own: the process died between storing the file and
// committing the task, or the delete after a failed create failed too. Web maintenance deletes
// such files once no live request can still be between the two (web-maintenance.ts).
// Rows are few (uploads in flight and the rare orphan), so the key alone is indexed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pending_uploads')
    .addColumn('upload_key', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // Set when a sweep (or a failed create) takes the upload for deletion, before any file is
    // deleted: from then on no task may adopt it, so a file is never deleted under a new task.
    .addColumn('claimed_at', 'bigint')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('pending_uploads').execute();
}
