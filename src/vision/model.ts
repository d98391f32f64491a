// The segmenter: one onnxruntime session per process, in its own thread, shared by every removal.
import { markAtomically } from './garbage-collection.ts';
import type { ThreadReply, ThreadRequest } from './inference-thread.ts';
import type { SegmenterOptions } from './model-session.ts';
import { isModelSide, modelSize } from './model-sides.ts';
import { startThread } from './start-thread.ts';

export { modelSize } from './model-sides.ts';
export type { SegmenterOptions } from './model-session.ts';

export interface Segmenter {
  /**
   * Foreground probability in [0, 1] for each pixel of a side² image (modelSize² unless a pass asks
   * for another side, see isModelSide), row-major, from the image as interleaved RGB bytes
   * (3 × side²). Runs in the inference thread, off the event loop, which hands the bytes to the INT8
   * graph as they are and normalises them into float planes only for the fp32 graph.
   */
  predict(rgb: Uint8Array, side?: number): Promise<Float32Array>;
}

let loading: Promise<Segmenter> | undefined;

/** How each segmenter of this process stops: see settleInference. */
const settlers = new Set<() => Promise<void>>();

/**
 * For a process about to exit: every segmenter of the process refuses new predictions, and this
 * resolves once no run is left in any inference thread (or after timeoutMs, resolving false).
 * Exiting while onnxruntime runs in a thread aborts the process ("terminate called after throwing
 * an instance of 'Napi::Error'", exit code 134); an idle thread is torn down cleanly.
 */
export async function settleInference(timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const settled = Promise.all([...settlers].map((settle) => settle())).then(() => true);
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The process-wide segmenter. The first call's options decide how it is built; later calls,
 * concurrent ones included, share that same session, so the process holds the model's memory once.
 */
export function loadSegmenter(options: SegmenterOptions): Promise<Segmenter> {
  // A dead thread is replaced on the next call.
  loading ??= startSegmenter(options, () => (loading = undefined)).catch((err: unknown) => {
    loading = undefined; // let a later call retry instead of caching the failure forever
    throw err;
  });
  return loading;
}

/**
 * The session could not be built (a data folder where the optimised graph cannot be saved, missing
 * weights). Its message is the thread's; a stack would be this thread's, which says nothing of it.
 */
export class ModelLoadError extends Error {
  override name = 'ModelLoadError';
  readonly code = 'model_load_failed';
}

/**
 * A segmenter with a session and thread of its own, apart from the process-wide one (the quality
 * benchmark runs the fp32 graph beside the product's as its baseline). A process that runs the model
 * runs its tasks too, so this also sets its garbage collector for them (garbage-collection.ts).
 */
export function startSegmenter(options: SegmenterOptions, onExit: () => void = () => {}): Promise<Segmenter> {
  markAtomically();
  const thread = startThread('inference-thread', options);
  const pending = new Map<number, { resolve: (mask: Float32Array) => void; reject: (err: Error) => void }>();
  let nextId = 0;
  let broken: Error | undefined;
  let drained: (() => void) | undefined;
  let settling: Promise<void> | undefined;
  const failAll = (err: Error): void => {
    broken = err;
    for (const { reject } of pending.values()) reject(err);
    pending.clear();
    drained?.();
  };
  const settle = (): Promise<void> => {
    broken ??= new Error('the process is stopping: no new model runs');
    settling ??= pending.size === 0 ? Promise.resolve() : new Promise((resolve) => (drained = resolve));
    return settling;
  };
  settlers.add(settle);

  return new Promise((resolve, reject) => {
    const segmenter: Segmenter = {
      predict(input, side = modelSize) {
        if (broken) return Promise.reject(broken);
        if (!isModelSide(side)) return Promise.reject(new Error(`the model cannot take an input side of ${side}`));
        if (input.length !== 3 * side * side) {
          return Promise.reject(new Error(`model input must have ${3 * side * side} RGB bytes, got ${input.length}`));
        }
        const id = nextId++;
        return new Promise((resolvePrediction, rejectPrediction) => {
          if (pending.size === 0) thread.ref();
          pending.set(id, { resolve: resolvePrediction, reject: rejectPrediction });
          // A copy is lent to the thread and comes back with the mask: callers may use their bytes
          // again, and the thread, which allocates too little to collect garbage often, is left
          // holding no input between runs.
          const lent = input.slice();
          thread.postMessage({ id, input: lent, side } satisfies ThreadRequest, [lent.buffer]);
        });
      },
    };
    thread.on('message', (reply: ThreadReply) => {
      if ('kind' in reply) {
        if (reply.kind === 'ready') resolve(segmenter);
        else reject(new ModelLoadError(`model failed to load: ${reply.message}`));
        // An idle thread must not keep a finished process alive; it is held only while work is pending.
        thread.unref();
        return;
      }
      const waiter = pending.get(reply.id);
      pending.delete(reply.id);
      if (pending.size === 0) {
        thread.unref();
        drained?.();
      }
      if ('mask' in reply) waiter?.resolve(reply.mask);
      else waiter?.reject(new Error(reply.error));
    });
    thread.on('error', (err) => {
      failAll(err);
      reject(err);
    });
    thread.on('exit', (code) => {
      const err = new Error(`inference thread exited with code ${code}`);
      failAll(err);
      reject(err);
      settlers.delete(settle);
      onExit();
    });
  });
}
