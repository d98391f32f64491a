// Uploads stored but not yet owned by a committed task (migration 008-pending-uploads): recorded
// before the bytes are stored, so that no stored upload is ever unknown to the database. A record
// is either adopted by the transaction that creates its task, or claimed for deletion; never both,
// whatever the order (both are single statements on the row, so the second one finds it gone or
// claimed), so a file is only deleted once no task can own it.
import { z } from 'zod';
import { inTransaction, type Db, type Tx } from './database.ts';
import { retentionBatch } from './maintenance-repository.ts';

export async function recordPendingUpload(db: Db, uploadKey: string, now = Date.now()): Promise<void> {
  await db.insertInto('pending_uploads').values({ upload_key: uploadKey, created_at: now, claimed_at: null }).execute();
}

/**
 * Removes the record inside the transaction that makes a task own the upload. False when it is
 * gone or claimed: maintenance took the upload for an orphan (a request stalled past the grace
 * period), and its file may be deleted, so the task must not be made from it.
 */
export async function adoptPendingUpload(tx: Tx, uploadKey: string): Promise<boolean> {
  const result = await tx.deleteFrom('pending_uploads').where('upload_key', '=', uploadKey).where('claimed_at', 'is', null).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export interface PendingUpload {
  uploadKey: string;
}

const pendingRow = z.object({ upload_key: z.string() });

/**
 * Claims up to retentionBatch uploads recorded before the cutoff, in key order after `after`, and
 * commits the claim before returning, so that their files can be deleted. Records claimed by an
 * earlier run whose delete failed are taken again; one adopted meanwhile is not returned.
 */
export async function claimPendingUploads(db: Db, recordedBefore: number, after: string | undefined, now = Date.now()): Promise<PendingUpload[]> {
  return inTransaction(db, async (tx) => {
    const rows = await tx
      .selectFrom('pending_uploads')
      .select('upload_key')
      .where('created_at', '<', recordedBefore)
      .$if(after !== undefined, (q) => q.where('upload_key', '>', after!))
      .orderBy('upload_key')
      .limit(retentionBatch)
      .execute();
    if (rows.length === 0) return [];
    const keys = rows.map((row) => pendingRow.parse(row).upload_key);
    const claimed = new Set(await claim(tx, keys, now));
    // In the database's order, which the next batch's `after` continues.
    return keys.filter((key) => claimed.has(key)).map((uploadKey) => ({ uploadKey }));
  });
}

/** Claims one upload a failed create leaves behind; false when a task owns it after all. */
export async function claimPendingUpload(db: Db, uploadKey: string, now = Date.now()): Promise<boolean> {
  return (await claim(db, [uploadKey], now)).length === 1;
}

/** The keys among these that are still recorded, now all claimed (an earlier claim's time is kept). */
async function claim(db: Db | Tx, uploadKeys: string[], now: number): Promise<string[]> {
  const claimed = await db
    .updateTable('pending_uploads')
    .set((eb) => ({ claimed_at: eb.fn.coalesce('claimed_at', eb.val(now)) }))
    .where('upload_key', 'in', uploadKeys)
    .returning('upload_key')
    .execute();
  return claimed.map((row) => pendingRow.parse(row).upload_key);
}

/** Forgets these claimed uploads (at most retentionBatch) once their files are deleted. */
export async function forgetPendingUploads(db: Db, uploadKeys: readonly string[]): Promise<void> {
  if (uploadKeys.length === 0) return;
  if (uploadKeys.length > retentionBatch) throw new RangeError(`at most ${retentionBatch} uploads at once, not ${uploadKeys.length}`);
  await db.deleteFrom('pending_uploads').where('upload_key', 'in', uploadKeys).execute();
}
