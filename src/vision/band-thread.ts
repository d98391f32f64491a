// A thread of the band pool (cutout-bands.ts): composes the band it is given and hands every
// buffer back with the result, so that nothing large stays in this thread between jobs (an idle
// thread would otherwise hold it until its next garbage collection, which may be long in coming).
import { parentPort } from 'node:worker_threads';
import { bandBuffers, composeBand, type Band } from './compose.ts';

export interface BandRequest {
  id: number;
  band: Band;
}
export type BandReply = { id: number; out: Uint8Array } | { id: number; error: string };

const port = parentPort!;
port.on('message', ({ id, band }: BandRequest) => {
  const buffers = bandBuffers(band);
  try {
    composeBand(band);
    port.postMessage({ id, out: band.out } satisfies BandReply, buffers);
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies BandReply, buffers);
  }
});
