// Result blobs on local disk under the data folder. Keys are checked again here so no path can
// escape the folder.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isResultKey, type ResultStore } from './result-store.ts';
import { writeFileAtomically } from './atomic-write.ts';

export class DiskResultStore implements ResultStore {
  constructor(private readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  private pathOf(key: string): string {
    if (!isResultKey(key)) throw new Error(`invalid result key ${JSON.stringify(key)}`);
    return path.join(this.dir, key);
  }

  async put(key: string, data: Buffer): Promise<void> {
    await writeFileAtomically(this.pathOf(key), data);
  }

  async open(key: string): Promise<{ stream: fs.ReadStream; size: number } | undefined> {
    if (!isResultKey(key)) return undefined;
    const file = this.pathOf(key);
    try {
      const stat = await fsp.stat(file);
      return { stream: fs.createReadStream(file), size: stat.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }

  async check(): Promise<void> {
    await fsp.access(this.dir, fs.constants.W_OK);
  }
}
