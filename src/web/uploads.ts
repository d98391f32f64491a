// What the remove form does with an uploaded file, in the order that keeps every stored upload
// known to the database: recorded as pending before its bytes are stored, owned by its task from
// the commit that creates the task. Whatever dies in between leaves a pending record, and web
// maintenance deletes the file it names (web-maintenance.ts).
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Tx } from '../store/database.ts';
import { adoptPendingUpload, forgetPendingUploads, recordPendingUpload } from '../store/pending-uploads-repository.ts';
import { newUploadKey, type UploadStore } from '../storage/upload-store.ts';

export interface UploadDeps {
  db: Db;
  uploads: UploadStore;
}

/**
 * Stores the file under a new key, recorded first: a crash during or after the put, or a put that
 * fails (its object may still have been written), leaves a record, never an unknown file.
 */
export async function storeUpload(deps: UploadDeps, data: Buffer, now = Date.now()): Promise<string> {
  const key = newUploadKey();
  await recordPendingUpload(deps.db, key, now);
  await deps.uploads.put(key, data);
  return key;
}

/**
 * In the transaction that creates the task: from its commit the task owns the upload. Refuses an
 * upload whose record maintenance already took (the request stalled past the grace period), as its
 * file may be deleted; the create then fails and rolls back.
 */
export async function adoptUpload(tx: Tx, key: string): Promise<void> {
  if (!(await adoptPendingUpload(tx, key))) throw new Error(`upload ${key} was deleted as an orphan before its task was created`);
}

/**
 * After a failed create, the file is deleted at once and then forgotten. If that fails the record
 * stays and maintenance deletes the file later, so the visitor still gets the create's own answer.
 */
export async function discardUpload(deps: UploadDeps, key: string, logger: Pick<FastifyBaseLogger, 'warn'>): Promise<void> {
  try {
    await deps.uploads.delete(key);
    await forgetPendingUploads(deps.db, [key]);
  } catch (err) {
    logger.warn({ err, key }, 'deleting the upload of a task not created failed; web maintenance deletes it later');
  }
}
