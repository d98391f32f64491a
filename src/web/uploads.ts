// What the remove form does with an uploaded file, in the order that keeps every stored upload
// known to the database: recorded as pending before its bytes are stored, owned by its task from
// the commit that creates the task. Whatever dies in between leaves a pending record, and web
// maintenance deletes the file it names (web-maintenance.ts).
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Tx } from '../store/database.ts';
import { adoptPendingUpload, claimPendingUpload, forgetPendingUploads, recordPendingUpload } from '../store/pending-uploads-repository.ts';
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

/** The upload was taken for an orphan before its task could be created: the visitor uploads again. */
export class UploadDiscardedError extends Error {
  readonly code = 'upload_discarded';
  constructor(key: string) {
    super(`upload ${key} was taken for deletion as an orphan before its task was created`);
  }
}

/**
 * In the transaction that creates the task: from its commit the task owns the upload. Refuses an
 * upload maintenance has claimed (the request stalled past the grace period, or the clocks of the
 * processes disagree by that much), as its file may be deleted; the create then rolls back.
 */
export async function adoptUpload(tx: Tx, key: string): Promise<void> {
  if (!(await adoptPendingUpload(tx, key))) throw new UploadDiscardedError(key);
}

/**
 * After a failed create, the file is deleted at once and then forgotten, unless a task owns it
 * after all (a create whose commit went through but whose reply was lost). If the delete fails the
 * claimed record stays and maintenance deletes the file later, so the visitor still gets the
 * create's own answer.
 */
export async function discardUpload(deps: UploadDeps, key: string, logger: Pick<FastifyBaseLogger, 'warn'>): Promise<void> {
  try {
    if (!(await claimPendingUpload(deps.db, key))) return;
    await deps.uploads.delete(key);
    await forgetPendingUploads(deps.db, [key]);
  } catch (err) {
    logger.warn({ err, key }, 'deleting the upload of a task not created failed; web maintenance deletes it later');
  }
}
