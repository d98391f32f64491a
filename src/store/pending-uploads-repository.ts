// Uploads stored but not yet owned by a committed task (migration 008-pending-uploads): recorded
// before the bytes are stored, so that no stored upload is ever unknown to the database.
import { z } from 'zod';
import type { Db, Tx } from './database.ts';
import { retentionBatch } from './maintenance-repository.ts';

export async function recordPendingUpload(db: Db, uploadKey: string, now = Date.now()): Promise<void> {
  await db.insertInto('pending_uploads').values({ upload_key: uploadKey, created_at: now }).execute();
}

/**
 * Removes the record inside the transaction that makes a task own the upload. False when it was
 * already gone: maintenance took the upload for an orphan (a request stalled past the grace
 * period), and its file may be deleted, so the task must not be made from it.
 */
export async function adoptPendingUpload(tx: Tx, uploadKey: string): Promise<boolean> {
  const result = await tx.deleteFrom('pending_uploads').where('upload_key', '=', uploadKey).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export interface PendingUpload {
  uploadKey: string;
}

const pendingRow = z.object({ upload_key: z.string() });

/** Up to retentionBatch uploads recorded before the cutoff, in key order after `after`. */
export async function findPendingUploads(db: Db, recordedBefore: number, after: string | undefined): Promise<PendingUpload[]> {
  const rows = await db
    .selectFrom('pending_uploads')
    .select('upload_key')
    .where('created_at', '<', recordedBefore)
    .$if(after !== undefined, (q) => q.where('upload_key', '>', after!))
    .orderBy('upload_key')
    .limit(retentionBatch)
    .execute();
  return rows.map((row) => ({ uploadKey: pendingRow.parse(row).upload_key }));
}

/** Forgets these uploads (at most retentionBatch) once their files are deleted. */
export async function forgetPendingUploads(db: Db, uploadKeys: readonly string[]): Promise<void> {
  if (uploadKeys.length === 0) return;
  if (uploadKeys.length > retentionBatch) throw new RangeError(`at most ${retentionBatch} uploads at once, not ${uploadKeys.length}`);
  await db.deleteFrom('pending_uploads').where('upload_key', 'in', uploadKeys).execute();
}
