// Files written to a temporary name and renamed into place, so a reader never sees half a file,
// and flushed to disk so that a power loss or a host crash cannot leave the final name on an empty
// or truncated file while the database says the write succeeded.
import { randomBytes } from 'node:crypto';
import fsp, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** Flushes an open file or folder (`synced` names it) to disk; tests wrap the real fsync to watch it. */
export type Sync = (handle: FileHandle, synced: string) => Promise<void>;

const fsync: Sync = (handle) => handle.sync();

/** A temporary file of writeFileAtomically's: `<name>.<pid>.<12 hex digits>.tmp`. */
const temporaryName = /^(.+)\.\d+\.[0-9a-f]{12}\.tmp$/;

/**
 * How long after its last change a temporary file is taken for one whose write died with its
 * process. A write is one local write and two fsyncs, seconds even for the largest result; an hour
 * leaves no live write using it. Were one still (a disk stalled that long), its rename fails with
 * ENOENT and the write fails as on any disk error: no partial file takes the name.
 */
export const staleTemporaryMs = 3_600_000;

/**
 * When a process is due to look for leftover temporary files: at most once per staleTemporaryMs,
 * since listing a folder of a day's results every minute would cost far more than the rare
 * leftover of a killed write it finds. Each call that answers true counts as a look.
 */
export function temporarySweepSchedule(): (now: number) => boolean {
  let lookedAt = -Infinity;
  return (now) => {
    if (now - lookedAt < staleTemporaryMs) return false;
    lookedAt = now;
    return true;
  };
}

export async function writeFileAtomically(target: string, data: Buffer, sync: Sync = fsync): Promise<void> {
  // A name of its own for every write: the pid alone is shared by two writes of one file in one
  // process, and by processes in separate containers (each pid 1) over one shared folder. Its shape
  // is temporaryName's, by which retention finds those a killed write left.
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
 * failure (other than a folder that cannot be flushed at all) fails the write (the file then stays under its name, as a bucket's failed write may have
 * stored its object, and the writer tries again).
 */
async function syncFolder(dir: string, sync: Sync): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await sync(handle, dir);
  } catch (err) {
    // Some file systems (FUSE and network mounts among them) cannot flush a folder and say EINVAL:
    // their renames are as durable as they can make them, and PostgreSQL makes the same allowance.
    if ((err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
  } finally {
    await handle.close();
  }
}

/**
 * Removes the temporary files in `dir` last changed before `before` (epoch ms) that writes of
 * `isOurs` names left behind, killed mid-write; returns how many. Anything else in the folder, a
 * folder or link named like them included, is never touched. Listed as a stream, so a folder of
 * many results is never held in memory whole.
 */
export async function removeStaleTemporaries(dir: string, isOurs: (name: string) => boolean, before: number): Promise<number> {
  let removed = 0;
  for await (const entry of await fsp.opendir(dir, { bufferSize: 256 })) {
    const name = temporaryName.exec(entry.name)?.[1];
    if (!entry.isFile() || name === undefined || !isOurs(name)) continue;
    const file = path.join(dir, entry.name);
    try {
      if ((await fsp.lstat(file)).mtimeMs >= before) continue;
      await fsp.unlink(file);
      removed++;
    } catch (err) {
      // Renamed into place or removed by another process's sweep meanwhile.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return removed;
}
