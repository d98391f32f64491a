// The full-size part of the pipeline (guided filter applied at full resolution, decontamination,
// assembly) is per-pixel JavaScript: a 12 MP photo takes about a second of it. Here it is split
// into bands of rows that a pool of threads computes in parallel, off the event loop that serves
// HTTP. One thread per core: the inference session's own threads are idle meanwhile unless
// another task is at its inference, and then the two share the cores.
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { BandReply, BandRequest } from './band-thread.ts';
import type { DecodedImage } from './decode.ts';
import type { Matte } from './matte.ts';
import { sharedBytes, sharedFloats, sharedZeros } from './shared-bytes.ts';
import { startThread } from './start-thread.ts';

interface PoolThread {
  worker: Worker;
  pending: Map<number, { resolve: () => void; reject: (err: Error) => void }>;
}

const threads: (PoolThread | undefined)[] = [];
let nextId = 0;

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
    if ('error' in reply) waiter?.reject(new Error(reply.error));
    else waiter?.resolve();
  });
  thread.worker.on('error', fail);
  thread.worker.on('exit', (code) => fail(new Error(`band thread exited with code ${code}`)));
  thread.worker.unref();
  threads[i] = thread;
  return thread;
}

function runBand(i: number, request: Omit<BandRequest, 'id'>): Promise<void> {
  const thread = threadAt(i);
  const id = nextId++;
  return new Promise((resolve, reject) => {
    if (thread.pending.size === 0) thread.worker.ref();
    thread.pending.set(id, { resolve, reject });
    thread.worker.postMessage({ id, ...request } satisfies BandRequest);
  });
}

/**
 * The matte with every plane in shared memory: the threads read it in place, instead of each
 * receiving (and keeping until its next garbage collection) a copy of ~20 MB of fields.
 */
function shareMatte(matte: Matte): Matte {
  const planes = <T extends Float32Array[]>(list: T): T => list.map(sharedFloats) as T;
  const alpha: Matte['alpha'] =
    matte.alpha.kind === 'bytes'
      ? { kind: 'bytes', data: sharedBytes(matte.alpha.data) }
      : { ...matte.alpha, coefficients: { ...matte.alpha.coefficients, a: planes(matte.alpha.coefficients.a), b: sharedFloats(matte.alpha.coefficients.b) } };
  const colours = matte.colours && { ...matte.colours, foreground: planes(matte.colours.foreground), background: planes(matte.colours.background) };
  return { alpha, colours };
}

/** Bands of at least this many rows: below, the hand-over costs more than the split saves. */
const minBandRows = 64;

/** The cutout's raw RGBA pixels at the source's full size, computed in parallel bands of rows. */
export async function composeCutout(image: DecodedImage, matte: Matte): Promise<Buffer> {
  const out = sharedZeros(image.width * image.height * 4);
  const shared: DecodedImage = { ...image, pixels: sharedBytes(image.pixels) };
  const sharedMatte = shareMatte(matte);
  const bands = Math.max(1, Math.min(os.availableParallelism(), Math.floor(image.height / minBandRows)));
  const rows = Math.ceil(image.height / bands);
  await Promise.all(
    Array.from({ length: bands }, (_, i) =>
      runBand(i, { image: shared, matte: sharedMatte, from: i * rows, to: Math.min(image.height, (i + 1) * rows), out }),
    ),
  );
  return out;
}
