// Files written to a temporary name and renamed into place, so a reader never sees half a file.
import fsp from 'node:fs/promises';

export async function writeFileAtomically(target: string, data: Buffer): Promise<void> {
  const temp = `${target}.${process.pid}.tmp`;
  await fsp.writeFile(temp, data);
  await fsp.rename(temp, target);
}
