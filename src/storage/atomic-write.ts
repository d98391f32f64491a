// Files written to a temporary name and renamed into place, so a reader never sees half a file.
import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';

export async function writeFileAtomically(target: string, data: Buffer): Promise<void> {
  // A name of its own for every write: the pid alone is shared by two writes of one file in one
  // process, and by processes in separate containers (each pid 1) over one shared folder.
  const temp = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await fsp.writeFile(temp, data);
    await fsp.rename(temp, target);
  } catch (err) {
    // The write's own error is the one to report; a temporary file that cannot be removed either
    // is left to whoever fixes the folder.
    await fsp.rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
}
