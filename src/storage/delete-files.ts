// Retention's deletes, for result files, uploads and orphaned uploads alike. Expired items are read
// in batches of bounded size (one statement naming every expired id outgrew the engines' parameter
// limits after a backlog); each item is recorded as deleted only after all of its files are gone,
// and one file that cannot be deleted (the bucket refuses it) holds back only its own item, which
// the next sweep tries again. Deleting a file already gone succeeds. An outage of the store (a
// StoreUnavailableError) ends the sweep: every other file would meet it too, and a bucket that never
// answers would hold each of them for the store's timeout, a backlog for hours. What is not deleted
// by then stays recorded, for the next sweep.
import { StoreUnavailableError } from '../domain/errors.ts';

/** Deletes lanes of files at once; a bucket answers each delete in a round trip. */
const lanes = 8;

export interface ExpiredFiles<T> {
  /** Up to `batch` items, in the order of their ids, after the item whose id is `after`. */
  find(after: string | undefined): Promise<T[]>;
  batch: number;
  /** What orders the items and names them to `record`: a task's id, or an orphaned upload's key. */
  idOf(item: T): string;
  keysOf(item: T): readonly string[];
  remove(key: string): Promise<void>;
  /** Records that these items' files are deleted. */
  record(ids: string[]): Promise<void>;
  onFailure(key: string, err: unknown): void;
  /** Whether to end after the batch in hand: the process is stopping, and the next start goes on. */
  stopped?: () => boolean;
}

export interface SweepResult {
  /** How many items were deleted and recorded. */
  deleted: number;
  /** The outage that ended the sweep, if one did: a sweep after it would only meet it again. */
  outage: StoreUnavailableError | undefined;
}

/** Sweeps every expired item, or those before an outage. */
export async function deleteExpiredFiles<T>(sweep: ExpiredFiles<T>): Promise<SweepResult> {
  let deleted = 0;
  let after: string | undefined;
  for (;;) {
    const batch = await sweep.find(after);
    const { done, outage } = await deleteFilesOf(batch, sweep);
    await sweep.record(done.map((item) => sweep.idOf(item)));
    deleted += done.length;
    if (outage || batch.length < sweep.batch || sweep.stopped?.()) return { deleted, outage };
    after = sweep.idOf(batch.at(-1)!);
  }
}

/** The items whose files are all deleted; after an outage no lane starts another delete. */
async function deleteFilesOf<T>(items: readonly T[], sweep: ExpiredFiles<T>): Promise<{ done: T[]; outage: StoreUnavailableError | undefined }> {
  const done: T[] = [];
  let outage: StoreUnavailableError | undefined;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length && !outage) {
      const item = items[next++]!;
      let complete = true;
      for (const key of sweep.keysOf(item)) {
        if (outage) {
          complete = false;
          break;
        }
        try {
          await sweep.remove(key);
        } catch (err) {
          complete = false;
          if (err instanceof StoreUnavailableError) outage ??= err;
          else sweep.onFailure(key, err);
        }
      }
      if (complete) done.push(item);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return { done, outage };
}
