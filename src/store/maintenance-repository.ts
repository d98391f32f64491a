import type { Db } from './database.ts';

/** Marks results older than the cutoff as deleted and returns their storage keys for removal. */
export async function expireResults(db: Db, finishedBefore: number, now = Date.now()): Promise<string[]> {
  const rows = await db
    .selectFrom('tasks')
    .select(['id', 'result_key'])
    .where('status', '=', 'succeeded')
    .where('result_deleted_at', 'is', null)
    .where('finished_at', '<', finishedBefore)
    .execute();
  if (rows.length === 0) return [];
  await db
    .updateTable('tasks')
    .set({ result_deleted_at: now })
    .where('id', 'in', rows.map((r) => r.id))
    .execute();
  return rows.flatMap((r) => (r.result_key ? [r.result_key] : []));
}

export async function purgeIdempotencyKeys(db: Db, createdBefore: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', createdBefore).executeTakeFirst();
  return Number(result.numDeletedRows);
}
