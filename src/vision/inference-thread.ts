// The worker thread that owns the process's one onnxruntime session. onnxruntime-node runs a
// session synchronously on the calling thread, so the session lives here and the event loop that
// serves HTTP never waits on an inference.
import { parentPort, workerData } from 'node:worker_threads';
import { createSession, runSession, takesBytes, type SegmenterOptions } from './model-session.ts';
import { rgbToTensor } from './preprocess.ts';

/** The image as interleaved RGB bytes of side² (see Segmenter.predict). */
export type ThreadRequest = { id: number; input: Uint8Array; side: number };
/** Every reply to a request hands the input back, so this thread keeps no input between runs. */
export type ThreadReply = { kind: 'ready' } | { kind: 'failed'; message: string } | { id: number; mask: Float32Array; input: Uint8Array } | { id: number; error: string; input: Uint8Array };

const port = parentPort!;
const post = (reply: ThreadReply, transfer: ArrayBuffer[] = []): void => port.postMessage(reply, transfer);

try {
  const options = workerData as SegmenterOptions;
  const session = await createSession(options);
  // The INT8 graph runs on the bytes as they came. The fp32 graph's float tensors (12 MB each at
  // 1024²) are filled from the bytes of each run: the bytes travel a quarter of the size, and the
  // main thread neither converts nor allocates. session.run returns at once and computes
  // (synchronously) on a later turn, so the next request may be handled before a run has read its
  // tensor: each run in flight takes a tensor of its own from a pool (one per input side), which
  // grows to the most runs of that side ever in flight at once (the worker's concurrency) and is
  // kept for the thread's life.
  const bytes = takesBytes(options.graph);
  const idle = new Map<number, Float32Array[]>();
  const pool = (side: number): Float32Array[] => idle.get(side) ?? idle.set(side, []).get(side)!;
  port.on('message', async ({ id, input, side }: ThreadRequest) => {
    const tensor = bytes ? null : (pool(side).pop() ?? new Float32Array(3 * side * side));
    try {
      // The output's memory is a plain ArrayBuffer of its own (whole, at offset 0), so it moves to
      // the main thread instead of being copied; a view into something larger is copied first.
      const output = await runSession(session, tensor ? rgbToTensor(input, tensor) : input, side);
      const mask = output.byteOffset === 0 && output.byteLength === output.buffer.byteLength ? output : output.slice();
      post({ id, mask, input }, [mask.buffer as ArrayBuffer, input.buffer as ArrayBuffer]);
    } catch (err) {
      post({ id, error: err instanceof Error ? err.message : String(err), input }, [input.buffer as ArrayBuffer]);
    } finally {
      if (tensor) pool(side).push(tensor);
    }
  });
  post({ kind: 'ready' });
} catch (err) {
  post({ kind: 'failed', message: err instanceof Error ? err.message : String(err) });
}
