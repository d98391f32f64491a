// What retention reads and writes: the result files of tasks finished past retention, in batches
// of bounded size (a single IN list of every expired id outgrew the engines' parameter limits after
// a backlog), and idempotency keys past their lifetime.
import { z } from 'zod';
import { outputFormats } from '../domain/removal-request.ts';
import type { Db } from './database.ts';

/** Tasks per batch of retention, for results and uploads: well within SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
export const retentionBatch = 500;

export interface ExpiredResult {
  taskId: string;
  resultKey: string | null;
  /** The task's attempts wrote their files under keys numbered 1 to claims. */
  claims: number;
  format: (typeof outputFormats)[number];
}

const expiredRow = z.object({
  id: z.string(),
  result_key: z.string().nullable(),
  claims: z.coerce.number().int().min(0),
  output_format: z.enum(outputFormats),
});

/**
 * Up to retentionBatch tasks, in id order after `after`, that finished before the cutoff and whose
 * files are not yet deleted. Failed and canceled tasks are among them: an attempt that lost its
 * lease, or whose process died between storing its file and finishing, may have left a file.
 */
export async function findExpiredResults(db: Db, finishedBefore: number, after: string | undefined): Promise<ExpiredResult[]> {
  const rows = await db
    .selectFrom('tasks')
    .select(['id', 'result_key', 'claims', 'output_format'])
    .where('finished_at', '<', finishedBefore)
    .where('result_deleted_at', 'is', null)
    .where((eb) => eb.or([eb('result_key', 'is not', null), eb('claims', '>', 0)]))
    .$if(after !== undefined, (q) => q.where('id', '>', after!))
    .orderBy('id')
    .limit(retentionBatch)
    .execute();
  return rows.map((row) => {
    const r = expiredRow.parse(row);
    return { taskId: r.id, resultKey: r.result_key, claims: r.claims, format: r.output_format };
  });
}

/** Records that the files of these tasks (at most retentionBatch) are deleted. */
export async function markResultsDeleted(db: Db, taskIds: readonly string[], now = Date.now()): Promise<void> {
  if (taskIds.length === 0) return;
  if (taskIds.length > retentionBatch) throw new RangeError(`at most ${retentionBatch} tasks at once, not ${taskIds.length}`);
  await db.updateTable('tasks').set({ result_deleted_at: now }).where('id', 'in', taskIds).where('result_deleted_at', 'is', null).execute();
}

export async function purgeIdempotencyKeys(db: Db, createdBefore: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', createdBefore).executeTakeFirst();
  return Number(result.numDeletedRows);
}
