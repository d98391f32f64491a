// A thread of the band pool (cutout-bands.ts): composes the band it is given, or takes the box
// means of the planes it is given, and hands every buffer back with the result, so that nothing large stays in this thread between jobs (an idle
// thread would otherwise hold it until its next garbage collection, which may be long in coming).
import { parentPort } from 'node:worker_threads';
import { bandBuffers, composeBand, type Band } from './compose.ts';
import { boxMeanInPlace } from './planes.ts';

/** A band of the cutout to compose, or working-size planes to take box means of (guided filter, colour fields). */
export type BandRequest = { id: number; band: Band } | { id: number; means: { planes: Float32Array[]; width: number; height: number; radius: number } };
export type BandReply = { id: number; out: Uint8Array } | { id: number; planes: Float32Array[] } | { id: number; error: string };

const port = parentPort!;

// The row sums of the box means: one working-size plane (at most 768² floats, 2.4 MB), kept for the
// thread's life and grown only for a larger plane.
let scratch = new Float32Array(0);
function scratchFor(length: number): Float32Array {
  if (scratch.length < length) scratch = new Float32Array(length);
  return scratch;
}
port.on('message', (request: BandRequest) => {
  const { id } = request;
  const buffers = 'band' in request ? bandBuffers(request.band) : request.means.planes.map((p) => p.buffer as ArrayBuffer);
  try {
    if ('band' in request) {
      composeBand(request.band);
      port.postMessage({ id, out: request.band.out } satisfies BandReply, buffers);
    } else {
      const { planes, width, height, radius } = request.means;
      for (const plane of planes) boxMeanInPlace(plane, width, height, radius, scratchFor(plane.length));
      port.postMessage({ id, planes } satisfies BandReply, buffers);
    }
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies BandReply, buffers);
  }
});
