// The worker thread that owns the process's one onnxruntime session. onnxruntime-node runs a
// session synchronously on the calling thread, so the session lives here and the event loop that
// serves HTTP never waits on an inference.
import { parentPort, workerData } from 'node:worker_threads';
import { createSession, runSession, type SegmenterOptions } from './model-session.ts';

export type ThreadRequest = { id: number; input: Float32Array };
/** Every reply to a request hands the input back, so this thread keeps no tensor between runs. */
export type ThreadReply = { kind: 'ready' } | { kind: 'failed'; message: string } | { id: number; mask: Float32Array; input: Float32Array } | { id: number; error: string; input: Float32Array };

const port = parentPort!;
const post = (reply: ThreadReply, transfer: ArrayBuffer[] = []): void => port.postMessage(reply, transfer);

try {
  const session = await createSession(workerData as SegmenterOptions);
  port.on('message', async ({ id, input }: ThreadRequest) => {
    try {
      // The output's memory is a plain ArrayBuffer of its own (whole, at offset 0), so it moves to
      // the main thread instead of being copied; a view into something larger is copied first.
      const output = await runSession(session, input);
      const mask = output.byteOffset === 0 && output.byteLength === output.buffer.byteLength ? output : output.slice();
      post({ id, mask, input }, [mask.buffer as ArrayBuffer, input.buffer as ArrayBuffer]);
    } catch (err) {
      post({ id, error: err instanceof Error ? err.message : String(err), input }, [input.buffer as ArrayBuffer]);
    }
  });
  post({ kind: 'ready' });
} catch (err) {
  post({ kind: 'failed', message: err instanceof Error ? err.message : String(err) });
}
