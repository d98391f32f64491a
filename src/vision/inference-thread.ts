// The worker thread that owns the process's one onnxruntime session. onnxruntime-node runs a
// session synchronously on the calling thread, so the session lives here and the event loop that
// serves HTTP never waits on an inference.
import { parentPort, workerData } from 'node:worker_threads';
import { createSession, runSession, type SegmenterOptions } from './model-session.ts';

export type ThreadRequest = { id: number; input: Float32Array };
export type ThreadReply = { kind: 'ready' } | { kind: 'failed'; message: string } | { id: number; mask: Float32Array } | { id: number; error: string };

const port = parentPort!;
const post = (reply: ThreadReply, transfer: ArrayBuffer[] = []): void => port.postMessage(reply, transfer);

try {
  const session = await createSession(workerData as SegmenterOptions);
  port.on('message', async ({ id, input }: ThreadRequest) => {
    try {
      // A copy of our own to hand over: the output's memory belongs to onnxruntime.
      const mask = (await runSession(session, input)).slice();
      post({ id, mask }, [mask.buffer]);
    } catch (err) {
      post({ id, error: err instanceof Error ? err.message : String(err) });
    }
  });
  post({ kind: 'ready' });
} catch (err) {
  post({ kind: 'failed', message: err instanceof Error ? err.message : String(err) });
}
