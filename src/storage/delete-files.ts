// Retention's deletes. Each item (a task's result files, an upload) is recorded as deleted only
// after all of its files are gone, and one file that cannot be deleted (a transient S3 error) holds
// back only its own item, which the next sweep tries again; deleting a file already gone succeeds.

/** Deletes lanes of files at once; a bucket answers each delete in a round trip. */
const lanes = 8;

/** The items whose files were all deleted; each failure is reported to onFailure. */
export async function deleteFilesOf<T>(
  items: readonly T[],
  keysOf: (item: T) => readonly string[],
  remove: (key: string) => Promise<void>,
  onFailure: (key: string, err: unknown) => void,
): Promise<T[]> {
  const deleted: T[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      let complete = true;
      for (const key of keysOf(item)) {
        try {
          await remove(key);
        } catch (err) {
          complete = false;
          onFailure(key, err);
        }
      }
      if (complete) deleted.push(item);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return deleted;
}
