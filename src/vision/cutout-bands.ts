// A pool of threads, one per core, for the pipeline's per-pixel work (WebAssembly, kernels.ts), off
// the event loop that serves HTTP: the full-size part (guided filter applied at full resolution,
// decontamination, assembly, a PNG's compression), and in bands of rows the guided filter's solve
// and the colour fields at the working size, and the model's input where it is larger than the photo;
// also a large photo's decode, so that its pixels land in shared memory (shared-decode.ts).
// The inference session's own threads are idle meanwhile unless another task is at its inference,
// and then the two share the cores.
//
// The working-size planes and the full-size rows are shared (shared-planes.ts): a thread reads the
// rows it needs (the photo's among them) and writes its rows of a result in place (the RGBA of a
// cutout for WebP too); only a PNG band's compressed rows travel back. Full-size rows the task's set
// has no room for (a very large photo's) travel with the band as buffers of their own, transferred,
// and the thread hands them back. Between jobs a thread holds only its WebAssembly memory
// (kernels.ts), whose size is that of the largest job, so resident memory stays flat.
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { TaskError } from '../domain/errors.ts';
import type { BandReply, BandRequest } from './band-thread.ts';
import { bandBuffers, sampledRows, type Band, type BandResult } from './compose.ts';
import type { DecodedImage } from './decode.ts';
import type { FieldSolver } from './foreground.ts';
import type { GuidedSolver } from './guided-filter.ts';
import type { RowSpan, StretchJob } from './kernels.ts';
import type { Matte } from './matte.ts';
import type { PngBand } from './png-file.ts';
import type { PngDeflater } from './png-scanlines.ts';
import type { DecodeJob } from './shared-decode.ts';
import type { PlaneSet } from './shared-planes.ts';
import { startThread } from './start-thread.ts';

interface PoolThread {
  worker: Worker;
  pending: Map<number, { resolve: (reply: BandReply) => void; reject: (err: Error) => void }>;
}

const threads: (PoolThread | undefined)[] = [];
let nextId = 0;

/** Bands of at least this many rows: below, the hand-over costs more than the split saves. */
const minBandRows = 64;

/** A live thread for slot `i`, started on first use and again after one died. */
function threadAt(i: number): PoolThread {
  const existing = threads[i];
  if (existing) return existing;
  const thread: PoolThread = { worker: startThread('band-thread', null), pending: new Map() };
  const fail = (err: Error): void => {
    threads[i] = undefined;
    for (const { reject } of thread.pending.values()) reject(err);
    thread.pending.clear();
  };
  thread.worker.on('message', (reply: BandReply) => {
    const waiter = thread.pending.get(reply.id);
    thread.pending.delete(reply.id);
    // An idle thread must not keep a finished process alive; it is held only while work is pending.
    if (thread.pending.size === 0) thread.worker.unref();
    if ('error' in reply) waiter?.reject(reply.code ? new TaskError(reply.code, reply.error) : new Error(reply.error));
    else waiter?.resolve(reply);
  });
  thread.worker.on('error', fail);
  thread.worker.on('exit', (code) => fail(new Error(`band thread exited with code ${code}`)));
  thread.worker.unref();
  threads[i] = thread;
  return thread;
}

function run(i: number, request: BandRequest, transfer: ArrayBuffer[]): Promise<BandReply> {
  const thread = threadAt(i);
  return new Promise((resolve, reject) => {
    if (thread.pending.size === 0) thread.worker.ref();
    thread.pending.set(request.id, { resolve, reject });
    thread.worker.postMessage(request, transfer);
  });
}

async function runBand<K extends BandResult['kind']>(i: number, band: Band, kind: K): Promise<Extract<BandResult, { kind: K }>> {
  const reply = await run(i, { id: nextId++, band }, bandBuffers(band));
  if (!('composed' in reply) || reply.composed.kind !== kind) throw new Error(`band thread answered a band with no ${kind} result`);
  return reply.composed as Extract<BandResult, { kind: K }>;
}

/**
 * A kernel over working-size planes in bands of rows, one per thread: an output row depends on the
 * input rows within `margin`, so each band is solved on its rows plus that margin on either side and
 * writes only its own, the same values as one solve over the whole plane (up to the rounding of the
 * box means' running sums, which start from other rows). The threads read and write the planes in
 * place, so they must be shared.
 */
async function inRowBands(planes: Float32Array[], width: number, height: number, margin: number, request: (rows: RowSpan) => BandRequest): Promise<void> {
  if (planes.some((plane) => !(plane.buffer instanceof SharedArrayBuffer))) throw new Error('the band threads solve on shared planes only (shared-planes.ts)');
  const count = Math.max(1, Math.min(os.availableParallelism(), Math.floor(height / Math.max(minBandRows, 2 * margin))));
  const rows = Math.ceil(height / count);
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const from = i * rows, to = Math.min(height, (i + 1) * rows);
      const reply = await run(i, request({ top: Math.max(0, from - margin), bottom: Math.min(height, to + margin), from, to }), []);
      if (!('solved' in reply)) throw new Error('band thread answered a solve with no result');
    }),
  );
}

/** The guided filter in bands (see GuidedSolver): a box mean of coefficients made from box means reaches two radii. */
export const guidedInThreads: GuidedSolver = (job) =>
  inRowBands([...job.inputs, ...job.outputs], job.width, job.height, 2 * job.radius, (rows) => ({ id: nextId++, guided: job, rows }));

/** The source stretched into the job's canvas in a band thread; both buffers move there and back (use the canvas returned). */
export async function stretchInThread(job: StretchJob): Promise<Uint8Array> {
  const reply = await run(0, { id: nextId++, stretch: job }, [job.source.buffer as ArrayBuffer, job.canvas.buffer as ArrayBuffer]);
  if (!('out' in reply)) throw new Error('band thread answered a stretch with no pixels');
  return reply.out;
}

/**
 * A large photo decoded in a band thread into `job.into` (shared-decode.ts), its pixels read where
 * they are; the decode's failures are its task errors, as decodeImage's are.
 */
export async function decodeInThread(job: DecodeJob): Promise<DecodedImage> {
  const reply = await run(0, { id: nextId++, decode: job }, []);
  if (!('decoded' in reply)) throw new Error('band thread answered a decode with no image');
  const { width, height, channels, pixels } = reply.decoded;
  const bytes = pixels ?? job.into.subarray(0, width * height * channels);
  return { width, height, channels, pixels: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length) };
}

/** The colour fields in bands (see FieldSolver): the narrow step's blur of the wide step's blur reaches both radii. */
export const fieldsInThreads: FieldSolver = (job) =>
  inRowBands([...job.inputs, ...job.outputs], job.width, job.height, job.wideRadius + job.narrowRadius, (rows) => ({ id: nextId++, colours: job, rows }));

/**
 * The full-size rows the bands read (the photo's, and any alpha bytes) in shared memory from the
 * task's plane set, filled band by band as each is sent: the threads read their rows there in
 * place. Copied into buffers of their own instead, the rows were allocated afresh each task and
 * counted twice towards V8's next full collection, made here and again on their way back from the
 * thread; at 12 MP that set one going in the middle of nearly every cutout's composition. Null
 * where the set has no room for them (shared-planes.ts, rowsAtMost): each band then takes a copy.
 */
interface SharedRows {
  pixels: Uint8Array | null;
  alpha: Uint8Array | null;
}

function sharedRowsFor(image: DecodedImage, matte: Matte, planes: PlaneSet): SharedRows {
  const shared = (bytes: Uint8Array): Uint8Array | null => (bytes.buffer instanceof SharedArrayBuffer ? bytes : planes.bytes(bytes.length));
  return { pixels: shared(image.pixels), alpha: matte.alpha.kind === 'bytes' ? shared(matte.alpha.data) : null };
}

/**
 * Bytes [start, end) of `source`: a view of them copied to the same place in `shared` (unless that
 * is `source` itself), or without shared rows a copy in a buffer of their own, the only thing a
 * transfer may move (a Buffer's `slice` is a view that would take the whole decoded image along).
 */
function rowsIn(shared: Uint8Array | null, source: Uint8Array, start: number, end: number): Uint8Array {
  if (!shared) return new Uint8Array(source.subarray(start, end));
  if (shared !== source) shared.set(source.subarray(start, end), start);
  return shared.subarray(start, end);
}

/** Rows [start, end) of a plane `width` wide: a view of a shared plane, which the thread reads in place, or a copy in a buffer of its own. */
function rowsOf(plane: Float32Array, width: number, { start, end }: { start: number; end: number }): Float32Array {
  return plane.buffer instanceof SharedArrayBuffer ? plane.subarray(start * width, end * width) : plane.slice(start * width, end * width);
}

/**
 * The band for full-size rows [from, to): its rows of the photo and of any alpha bytes, put in
 * shared memory (or copied, where the set has no room: rowsIn), and only the rows of the matte's
 * working-size planes that its rows sample.
 */
function bandOf(image: DecodedImage, matte: Matte, shared: SharedRows, from: number, to: number, target: Band['target']): Band {
  const { width, height, channels, pixels } = image;
  const { alpha, colours } = matte;
  const cells = alpha.kind === 'guided' ? sampledRows(from, to, height, alpha.coefficients.height) : { start: 0, end: 0 };
  const colourRows = colours ? sampledRows(from, to, height, colours.height) : { start: 0, end: 0 };
  const rowsOfAll = <T extends Float32Array[]>(planes: T, planeWidth: number, rows: { start: number; end: number }): T =>
    planes.map((p) => rowsOf(p, planeWidth, rows)) as T;
  const bandAlpha: Matte['alpha'] =
    alpha.kind === 'bytes'
      ? { kind: 'bytes', data: rowsIn(shared.alpha, alpha.data, from * width, to * width) }
      : {
          ...alpha,
          coefficients: {
            ...alpha.coefficients,
            a: rowsOfAll(alpha.coefficients.a, alpha.coefficients.width, cells),
            b: rowsOf(alpha.coefficients.b, alpha.coefficients.width, cells),
          },
        };
  return {
    width,
    height,
    channels,
    from,
    to,
    pixels: rowsIn(shared.pixels, pixels, from * width * channels, to * width * channels),
    matte: {
      alpha: bandAlpha,
      colours: colours && { ...colours, foreground: rowsOfAll(colours.foreground, colours.width, colourRows), background: rowsOfAll(colours.background, colours.width, colourRows) },
    },
    cellsFrom: cells.start,
    coloursFrom: colourRows.start,
    target,
  };
}

/**
 * Bands per thread: a thread done with a light band (mostly clear background, quick to compress)
 * takes the next instead of waiting while another works through the subject.
 */
const bandsPerThread = 4;

/**
 * Rows per band and the number of bands for an image `height` rows tall on `threads` threads:
 * `bandsPerThread` each where the bands keep at least `minBandRows`. Rounding the rows up can leave
 * fewer bands than asked for; none of them is empty.
 */
export function bandLayout(height: number, threads: number): { rows: number; count: number } {
  const rows = Math.ceil(height / Math.max(1, Math.min(threads * bandsPerThread, Math.floor(height / minBandRows))));
  return { rows, count: Math.ceil(height / rows) };
}

/**
 * The order to compose bands of `rows` rows in (`count` of them, an image `height` rows tall):
 * the costliest first, so that the last ones, which a thread takes while the other finishes, are
 * short. A band's cost is estimated from its rows and the share of them the alpha leaves visible
 * (`visibleRows`, per working row; see Matte). The weight of a visible row, 1.6 times more than a
 * clear one, is a fit to a throwaway timing of the bench's photos band by band.
 */
export function composeOrder(rows: number, count: number, height: number, visibleRows: Float32Array): number[] {
  const scale = visibleRows.length / height;
  const cost = Array.from({ length: count }, (_, i) => {
    const from = i * rows, to = Math.min(height, from + rows);
    // Clamped: the last band's end can land a rounding error past the last working row (3091 · (495 / 3091)
    // is 495.00000000000006), and a row that does not exist has no share.
    const first = Math.min(visibleRows.length - 1, Math.floor(from * scale));
    const last = Math.min(visibleRows.length, Math.max(first + 1, Math.ceil(to * scale)));
    let visible = 0;
    for (let y = first; y < last; y++) visible += visibleRows[y]!;
    return (to - from) * (1 + 1.6 * (visible / (last - first)));
  });
  return cost.map((_, i) => i).sort((a, b) => cost[b]! - cost[a]! || a - b);
}

/**
 * Composes the cutout's rows band by band on the pool, the costliest bands first (composeOrder),
 * each thread given the next band when done with one. A thread's next band already waits in its
 * queue while it works on the one before, so that it never waits for this thread to take a result
 * and copy out more (faster at every size in a throwaway A/B that ran the two ways in turn): each
 * thread has at most two bands queued. Results in the order of the rows.
 */
async function composeInBands<K extends BandResult['kind']>(image: DecodedImage, matte: Matte, planes: PlaneSet, target: (from: number, to: number) => Band['target'] & { kind: K }): Promise<Extract<BandResult, { kind: K }>[]> {
  const { height } = image;
  const threadCount = os.availableParallelism();
  const { rows, count } = bandLayout(height, threadCount);
  const results: Extract<BandResult, { kind: K }>[] = [];
  const order = matte.visibleRows ? composeOrder(rows, count, height, matte.visibleRows) : Array.from({ length: count }, (_, i) => i);
  const shared = sharedRowsFor(image, matte, planes);
  let next = 0;
  const claim = (): { index: number; band: Band; kind: K } | null => {
    if (next >= count) return null;
    const index = order[next++]!;
    const from = index * rows, to = Math.min(height, from + rows);
    const spec = target(from, to);
    return { index, band: bandOf(image, matte, shared, from, to, spec), kind: spec.kind };
  };
  const send = (thread: number, claimed: ReturnType<typeof claim>) => {
    if (!claimed) return null;
    const running = runBand(thread, claimed.band, claimed.kind);
    // A band queued behind one that failed is never awaited: its failure is not left unhandled.
    running.catch(() => {});
    return { ...claimed, running };
  };
  // Every thread is sent its first band before any thread's next band is copied out.
  const firsts = Array.from({ length: Math.min(threadCount, count) }, (_, thread) => send(thread, claim()));
  await Promise.all(
    firsts.map(async (first, thread) => {
      for (let current = first, queued = send(thread, claim()); current; ) {
        results[current.index] = await current.running;
        current = queued;
        queued = send(thread, claim());
      }
    }),
  );
  return results;
}

/**
 * The cutout's raw RGBA pixels at the source's full size, computed in parallel bands of rows, each
 * band's written in place into memory taken from `planes`, as are the photo's rows the bands read:
 * the pixels are good until the set is released. Where the set has no room for them, each band's
 * rows come back in a buffer of their own, and the bands are joined.
 */
export async function composeCutout(image: DecodedImage, matte: Matte, planes: PlaneSet): Promise<Buffer> {
  const rowBytes = image.width * 4;
  const rgba = planes.bytes(image.height * rowBytes);
  const bands = await composeInBands(image, matte, planes, (from, to) => ({ kind: 'rgba', out: rgba ? rgba.subarray(from * rowBytes, to * rowBytes) : new Uint8Array((to - from) * rowBytes) }));
  return rgba ? Buffer.from(rgba.buffer, rgba.byteOffset, rgba.length) : Buffer.concat(bands.map((band) => band.out));
}

/**
 * The cutout's PNG image data, each band composed and compressed in its thread (png-scanlines.ts),
 * top to bottom, for assemblePng: neither the full-size RGBA nor its encoding passes through this
 * thread. `planes` as for composeCutout; `deflater`: the bench's comparisons (png-scanlines.ts).
 */
export async function compressBands(image: DecodedImage, matte: Matte, planes: PlaneSet, deflater: PngDeflater = 'runs'): Promise<PngBand[]> {
  const bands = await composeInBands(image, matte, planes, () => ({ kind: 'png', deflater }));
  return bands.map((band) => band.png);
}
