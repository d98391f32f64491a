// Result blobs on local disk under the data folder. Keys are checked again here so no path can
// escape the folder.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isResultKey, type OpenResult, type ResultReader, type ResultStore } from './result-store.ts';
import { removeStaleTemporaries, writeFileAtomically } from './atomic-write.ts';

/** An open result file: read it once (whole or one byte range), or close it unread. */
export class StoredResult implements OpenResult {
  constructor(
    private readonly handle: fsp.FileHandle,
    readonly size: number,
    readonly modified: Date,
  ) {}

  /** Bytes start..end inclusive, as HTTP ranges count them; the file closes when the stream ends. */
  read(range: { start: number; end: number } = { start: 0, end: Math.max(0, this.size - 1) }): fs.ReadStream {
    return this.handle.createReadStream({ start: range.start, end: range.end, autoClose: true });
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

export class DiskResultStore implements ResultStore, ResultReader {
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

  /**
   * The file is opened before it is measured: once open it outlives a retention sweep that
   * deletes it, so a download that found it is served whole instead of failing half-answered.
   */
  async open(key: string): Promise<StoredResult | undefined> {
    if (!isResultKey(key)) return undefined;
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(this.pathOf(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const stat = await handle.stat();
      return new StoredResult(handle, stat.size, stat.mtime);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }

  async check(): Promise<void> {
    await fsp.access(this.dir, fs.constants.W_OK);
  }

  removeStaleTemporaries(before: number): Promise<number> {
    return removeStaleTemporaries(this.dir, isResultKey, before);
  }
}
