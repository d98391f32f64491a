// A thread of the band pool (cutout-bands.ts): composes the band it is given, or takes the box
// means of the planes it is given, and hands every buffer back with the result, so that nothing large stays in this thread between jobs (an idle
// thread would otherwise hold it until its next garbage collection, which may be long in coming).
import { parentPort } from 'node:worker_threads';
import { bandBuffers, composeBand, type Band } from './compose.ts';
import { boxMean } from './planes.ts';

/** A band of the cutout to compose, or working-size planes to take box means of (guided filter, colour fields). */
export type BandRequest = { id: number; band: Band } | { id: number; means: { planes: Float32Array[]; width: number; height: number; radius: number } };
export type BandReply = { id: number; out: Uint8Array } | { id: number; planes: Float32Array[] } | { id: number; error: string };

const port = parentPort!;
port.on('message', (request: BandRequest) => {
  const { id } = request;
  const buffers = 'band' in request ? bandBuffers(request.band) : request.means.planes.map((p) => p.buffer as ArrayBuffer);
  try {
    if ('band' in request) {
      composeBand(request.band);
      port.postMessage({ id, out: request.band.out } satisfies BandReply, buffers);
    } else {
      const { planes, width, height, radius } = request.means;
      const means = planes.map((plane) => boxMean(plane, width, height, radius));
      port.postMessage({ id, planes: means } satisfies BandReply, [...buffers, ...means.map((m) => m.buffer as ArrayBuffer)]);
    }
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies BandReply, buffers);
  }
});
