// A thread of the band pool (cutout-bands.ts): composes (and for a PNG compresses) the band it is
// given, solves the guided filter's coefficients or the colour fields over rows of the shared planes
// it is given (writing its rows of the results there), or stretches a photo into the model's input,
// and hands every buffer of its own it was given back with the result.
// Between jobs it keeps only its WebAssembly memory (kernels.ts), whose size is that of the largest
// job; a buffer left here would wait for this thread's next garbage collection, which may be long
// in coming.
import { parentPort } from 'node:worker_threads';
import { bandBuffers, composeBand, type Band, type BandResult } from './compose.ts';
import type { FieldsJob } from './foreground.ts';
import type { GuidedJob } from './guided-filter.ts';
import { colourFieldsRows, guidedMatteRows, stretchRgbInto, type RowSpan, type StretchJob } from './kernels.ts';

/**
 * A band of the cutout to compose, working-size planes to solve the guided filter or the colour
 * fields on, or a photo to stretch into the model's input.
 */
export type BandRequest =
  | { id: number; band: Band }
  | { id: number; guided: GuidedJob; rows: RowSpan }
  | { id: number; colours: FieldsJob; rows: RowSpan }
  | { id: number; stretch: StretchJob };
export type BandReply =
  | { id: number; out: Uint8Array }
  | { id: number; composed: BandResult }
  | { id: number; solved: true }
  | { id: number; error: string };

const port = parentPort!;

port.on('message', (request: BandRequest) => {
  const { id } = request;
  // Shared planes stay where they are; only buffers of the request's own travel back.
  const buffers = 'band' in request ? bandBuffers(request.band) : 'stretch' in request ? [request.stretch.source.buffer as ArrayBuffer, request.stretch.canvas.buffer as ArrayBuffer] : [];
  try {
    if ('stretch' in request) {
      stretchRgbInto(request.stretch);
      port.postMessage({ id, out: request.stretch.canvas } satisfies BandReply, buffers);
    } else if ('band' in request) {
      const composed = composeBand(request.band);
      const transfer = composed.kind === 'png' ? [...buffers, composed.png.chunks.buffer as ArrayBuffer] : buffers;
      port.postMessage({ id, composed } satisfies BandReply, transfer);
    } else if ('guided' in request) {
      const { inputs, outputs, width, height, radius, epsilon, curve } = request.guided;
      guidedMatteRows(inputs, outputs, width, height, request.rows, radius, epsilon, curve);
      port.postMessage({ id, solved: true } satisfies BandReply);
    } else {
      const { inputs, outputs, width, height, wideRadius, narrowRadius } = request.colours;
      colourFieldsRows(inputs, outputs, width, height, request.rows, wideRadius, narrowRadius);
      port.postMessage({ id, solved: true } satisfies BandReply);
    }
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies BandReply, buffers);
  }
});
