// A thread of the band pool (cutout-bands.ts): composes (and for a PNG compresses) the band it is
// given, solves the guided filter's coefficients or the colour fields over the planes it is given,
// or stretches a photo into the model's input, and hands every buffer back with the result.
// Between jobs it keeps only its WebAssembly memory (kernels.ts), whose size is that of the largest
// job; a buffer left here would wait for this thread's next garbage collection, which may be long
// in coming.
import { parentPort } from 'node:worker_threads';
import { bandBuffers, composeBand, type Band, type BandResult } from './compose.ts';
import type { GuidedJob } from './guided-filter.ts';
import { colourFieldsInPlace, guidedMatteInPlace, stretchRgbInto, type StretchJob } from './kernels.ts';

/**
 * A band of the cutout to compose, working-size planes to solve the guided filter or the colour
 * fields on, or a photo to stretch into the model's input.
 */
export type BandRequest =
  | { id: number; band: Band }
  | { id: number; guided: GuidedJob }
  | { id: number; colours: { planes: Float32Array[]; width: number; height: number; wideRadius: number; narrowRadius: number } }
  | { id: number; stretch: StretchJob };
export type BandReply =
  | { id: number; out: Uint8Array }
  | { id: number; composed: BandResult }
  | { id: number; planes: Float32Array[] }
  | { id: number; error: string };

const port = parentPort!;

port.on('message', (request: BandRequest) => {
  const { id } = request;
  const buffers =
    'band' in request
      ? bandBuffers(request.band)
      : 'stretch' in request
        ? [request.stretch.source.buffer as ArrayBuffer, request.stretch.canvas.buffer as ArrayBuffer]
        : ('guided' in request ? request.guided : request.colours).planes.map((p) => p.buffer as ArrayBuffer);
  try {
    if ('stretch' in request) {
      stretchRgbInto(request.stretch);
      port.postMessage({ id, out: request.stretch.canvas } satisfies BandReply, buffers);
    } else if ('band' in request) {
      const composed = composeBand(request.band);
      const transfer = composed.kind === 'png' ? [...buffers, composed.png.chunks.buffer as ArrayBuffer] : buffers;
      port.postMessage({ id, composed } satisfies BandReply, transfer);
    } else if ('guided' in request) {
      const { planes, width, height, radius, epsilon, curve } = request.guided;
      guidedMatteInPlace(planes, width, height, radius, epsilon, curve);
      port.postMessage({ id, planes } satisfies BandReply, buffers);
    } else {
      const { planes, width, height, wideRadius, narrowRadius } = request.colours;
      colourFieldsInPlace(planes, width, height, wideRadius, narrowRadius);
      port.postMessage({ id, planes } satisfies BandReply, buffers);
    }
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies BandReply, buffers);
  }
});
