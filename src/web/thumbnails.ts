// The history list's result thumbnails, made here from results on local disk or in the bucket: a
// result is full resolution (up to CUTOUT_MAX_PIXELS, several MB), and the list shows 50 of them
// at 96 pixels on every view, so the browser is never sent the full image to scale. The list asks
// for many at once, while in the default deployment the same process runs the model. So
// thumbnails are made one at a time per process, and the few KB each one comes to are kept in
// memory, so a history page viewed again reads and decodes nothing (and costs no bucket egress).
//
// The cache knows nothing of tasks or accounts: the route checks the task row (its owner, and that
// its result is not deleted) before asking for a thumbnail, on every request, hit or miss.
import sharp from 'sharp';
import type { OpenResult } from '../storage/result-store.ts';
import { StoreOutage } from './store-outage.ts';

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

/**
 * The most bytes a result of `maxPixels` pixels can take; a larger one is refused by its size,
 * before a byte of it is read. sharp's limitInputPixels would refuse it too, but only after the
 * whole object had been downloaded and held. Results are 8-bit RGBA: 4 bytes a pixel and, in PNG,
 * a filter byte a row (one a pixel at worst, for a one-pixel-wide image), which the service's
 * deflater codes in at most 15 bits a byte (png-deflate.ts, blockBound): under 9.4 bytes a pixel.
 * Lossless WebP codes a pixel's 4 channels in at most 15 bits each, 7.5 bytes. A real result is
 * a small fraction of this bound; it stops an object that is no result of ours from being read.
 */
export function largestResultBytes(maxPixels: number): number {
  return maxPixels * 10 + 64 * 1024;
}

/** What the module calls to decode; a test may wrap render to watch the decodes. */
export const thumbnailDeps = { render: renderThumbnail };

/** The process's one decode queue: every thumbnail made here waits its turn in it. */
export const thumbnailQueue = new OneAtATime();

/**
 * Thumbnails waiting their turn at most; past that a request is answered "busy" at once. One
 * history page asks for at most 50, so this is a few pages' worth: enough for real use, while a
 * script asking for thousands cannot make every later view wait behind it.
 */
export const thumbnailMaxWaiting = 200;

/** The bucket's failures, shared by every thumbnail read from it in this process. */
export const bucketOutage = new StoreOutage(30_000);

const made = new ByteBoundedCache(thumbnailCacheBytes);

export interface ThumbnailSource {
  /** The result's key: unique to one result of one task, so it names its thumbnail for good. */
  key: string;
  open(): Promise<OpenResult | undefined>;
  maxPixels: number;
  /** Told when the result does not decode (damaged) or is too large to be one; it then has none. */
  onUndecodable(err: unknown): void;
  /** Told when the store fails to give the result (an outage, a read error); it then has none. */
  onUnreadable(err: unknown): void;
  /** Where a failure of the store is remembered, for a store that fails for all results at once. */
  outage?: StoreOutage;
  /** True once nobody waits for the answer (the browser left the page): its turn is skipped. */
  abandoned(): boolean;
}

/**
 * The thumbnail of a result whose task row the caller has just checked (owner, not deleted), or
 * undefined when its result is gone, cannot be read or does not decode. A cached one is answered
 * without touching the store: the row, not the file, is what says a result is still there, as
 * everywhere else in the app (retention deletes the file a moment before it marks the row).
 */
export async function thumbnailOf(source: ThumbnailSource): Promise<Buffer | 'busy' | undefined> {
  const cached = made.get(source.key);
  if (cached) return cached;
  if (thumbnailQueue.pending >= thumbnailMaxWaiting) return 'busy';
  return thumbnailQueue.run(async () => {
    // A request for the same result that queued behind the one that made it takes that one.
    const meanwhile = made.get(source.key);
    if (meanwhile) return meanwhile;
    // A browser that left the history page has cancelled its image requests: no decode for them.
    if (source.abandoned()) return undefined;
    // The store failed a moment ago (and that was logged): the requests queued behind that one
    // (the rest of the history page) are not each made to wait for it to fail again.
    if (source.outage?.ongoing) return undefined;
    const data = await readWhole(source).catch((err: unknown) => {
      source.outage?.began();
      source.onUnreadable(err);
      return undefined;
    });
    if (!data) return undefined;
    const thumbnail = await thumbnailDeps.render(data, source.maxPixels).catch((err: unknown) => {
      source.onUndecodable(err);
      return undefined;
    });
    // A damaged result is not remembered as missing: one put back in place shows again.
    if (thumbnail) made.set(source.key, thumbnail);
    return thumbnail;
  });
}

/**
 * The whole result, read inside the queue: it is as large as the thumbnail is small. Undefined
 * when it is not there, or too large to be a result (told to onUndecodable: not the store's fault).
 */
async function readWhole(source: ThumbnailSource): Promise<Buffer | undefined> {
  const file = await source.open();
  if (!file) return undefined;
  const limit = largestResultBytes(source.maxPixels);
  if (file.size > limit) {
    await file.close();
    source.onUndecodable(new Error(`the result is ${file.size} bytes, more than one of at most ${source.maxPixels} pixels can take (${limit})`));
    return undefined;
  }
  // Into one buffer of the result's size: collecting chunks and joining them would hold it twice.
  const data = Buffer.allocUnsafe(file.size);
  let length = 0;
  try {
    for await (const chunk of file.read()) length += (chunk as Buffer).copy(data, length);
  } catch (err) {
    await file.close().catch(() => undefined);
    throw err;
  }
  return data.subarray(0, length);
}
