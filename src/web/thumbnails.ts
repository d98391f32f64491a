// The history list's result thumbnails, for results on local disk. A result is full resolution
// (up to CUTOUT_MAX_PIXELS) and the list asks for many thumbnails at once, on every view, while
// in the default deployment the same process runs the model. So thumbnails are made one at a time
// per process, and the few KB each one comes to are kept in memory, so a history page viewed
// again reads and decodes nothing.
//
// The cache knows nothing of tasks or accounts: the route checks the task row (its owner, and that
// its result is not deleted) before asking for a thumbnail, on every request, hit or miss.
import sharp from 'sharp';
import type { StoredResult } from '../storage/disk-result-store.ts';

/** Pixels a side: the list shows thumbnails at 64 CSS pixels, sharp on 1.5× screens. */
export const thumbnailSide = 96;

/**
 * Bytes of thumbnails kept. A 96-pixel WebP is about 2-6 KB, so this holds some thousand of them
 * (twenty full history pages of 50) while costing the process less than its HTTP buffers do.
 */
export const thumbnailCacheBytes = 4 * 1024 * 1024;

/**
 * Runs one job at a time, in the order asked. Decoding a full-resolution result costs tens of MB
 * and a core for a while; side by side, six of them (one browser's parallel image requests) would
 * spike memory by hundreds of MB and take both cores from inference.
 */
export class OneAtATime {
  private queue: Promise<unknown> = Promise.resolve();
  private running = 0;
  private waiting = 0;

  /** Jobs running now: 0 or 1. */
  get active(): number {
    return this.running;
  }

  /** Jobs waiting their turn. */
  get pending(): number {
    return this.waiting;
  }

  run<T>(job: () => Promise<T>): Promise<T> {
    this.waiting++;
    const turn = this.queue.then(async () => {
      this.waiting--;
      this.running++;
      try {
        return await job();
      } finally {
        this.running--;
      }
    });
    // The next job waits for this one to end, however it ends.
    this.queue = turn.catch(() => undefined);
    return turn;
  }
}

/** A map of buffers that forgets the least recently used ones past a total size in bytes. */
export class ByteBoundedCache {
  private readonly entries = new Map<string, Buffer>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  get bytes(): number {
    return this.total;
  }

  get(key: string): Buffer | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // Map keeps insertion order: moving a hit to the end makes the first entry the least recent.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: Buffer): void {
    this.delete(key);
    if (value.byteLength > this.maxBytes) return;
    this.entries.set(key, value);
    this.total += value.byteLength;
    for (const [oldest, old] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.total -= old.byteLength;
    }
  }

  delete(key: string): void {
    const value = this.entries.get(key);
    if (value === undefined) return;
    this.entries.delete(key);
    this.total -= value.byteLength;
  }
}

/**
 * Scales a result down to a thumbnail. Results are PNG or WebP: WebP shrinks while it loads (sharp
 * does so itself when resizing); PNG cannot, so it is read row by row (sequentialRead) and shrunk
 * as it goes instead of being held decoded whole. limitInputPixels refuses anything larger than
 * the service would have made.
 */
export function renderThumbnail(data: Buffer, maxPixels: number): Promise<Buffer> {
  return sharp(data, { sequentialRead: true, limitInputPixels: maxPixels })
    .resize({ width: thumbnailSide, height: thumbnailSide, fit: 'inside' })
    .webp({ quality: 80 })
    .toBuffer();
}

/** What the module calls to decode; a test may wrap render to watch the decodes. */
export const thumbnailDeps = { render: renderThumbnail };

/** The process's one decode queue: every thumbnail made here waits its turn in it. */
export const thumbnailQueue = new OneAtATime();

const made = new ByteBoundedCache(thumbnailCacheBytes);

export interface ThumbnailSource {
  /** The result's key: unique to one result of one task, so it names its thumbnail for good. */
  key: string;
  open(): Promise<StoredResult | undefined>;
  maxPixels: number;
  /** Told when the file does not decode (damaged on disk); the thumbnail is then missing. */
  onUndecodable(err: unknown): void;
}

/**
 * The thumbnail of a result whose task row the caller has just checked (owner, not deleted), or
 * undefined when its file is gone or does not decode. A cached one is answered without touching
 * the file: the row, not the file, is what says a result is still there, as everywhere else in the
 * app (retention deletes the file a moment before it marks the row).
 */
export async function thumbnailOf(source: ThumbnailSource): Promise<Buffer | undefined> {
  const cached = made.get(source.key);
  if (cached) return cached;
  return thumbnailQueue.run(async () => {
    // A request for the same result that queued behind the one that made it takes that one.
    const meanwhile = made.get(source.key);
    if (meanwhile) return meanwhile;
    // Read inside the queue too: the file is as large as the thumbnail is small.
    const file = await source.open();
    if (!file) return undefined;
    // Into one buffer of the file's size: collecting chunks and joining them would hold it twice.
    const data = Buffer.allocUnsafe(file.size);
    let length = 0;
    for await (const chunk of file.read()) length += (chunk as Buffer).copy(data, length);
    const thumbnail = await thumbnailDeps.render(data.subarray(0, length), source.maxPixels).catch((err: unknown) => {
      source.onUndecodable(err);
      return undefined;
    });
    // A damaged file is not remembered as missing: one put back in place shows again.
    if (thumbnail) made.set(source.key, thumbnail);
    return thumbnail;
  });
}
