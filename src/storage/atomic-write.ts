// Files written to a temporary name and renamed into place, so a reader never sees half a file,
// and flushed to disk so that a power loss or a host crash cannot leave the final name on an empty
// or truncated file while the database says the write succeeded.
import { randomBytes } from 'node:crypto';
import fsp, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** Flushes an open file or folder (`synced` names it) to disk; tests wrap the real fsync to watch it. */
export type Sync = (handle: FileHandle, synced: string) => Promise<void>;

const fsync: Sync = (handle) => handle.sync();

export async function writeFileAtomically(target: string, data: Buffer, sync: Sync = fsync): Promise<void> {
  // A name of its own for every write: the pid alone is shared by two writes of one file in one
  // process, and by processes in separate containers (each pid 1) over one shared folder.
  const temp = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    // The data reaches the disk before the rename does, else the rename can be on disk first.
    const handle = await fsp.open(temp, 'w');
    try {
      await handle.writeFile(data);
      await sync(handle, temp);
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, target);
  } catch (err) {
    // The write's own error is the one to report; a temporary file that cannot be removed either
    // is left to whoever fixes the folder.
    await fsp.rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
  await syncFolder(path.dirname(target), sync);
}

/**
 * The rename lives in the folder's entries, which only a flush of the folder puts on disk: until
 * then a crash can bring back the old entry, or none, after the task was recorded as done. A
 * failure fails the write (the file then stays under its name, as a bucket's failed write may have
 * stored its object, and the writer tries again).
 */
async function syncFolder(dir: string, sync: Sync): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await sync(handle, dir);
  } finally {
    await handle.close();
  }
}
