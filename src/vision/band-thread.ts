// A thread of the band pool (cutout-bands.ts): composes (and for a PNG compresses) the band it is
// given, solves the guided filter's coefficients or the colour fields over rows of the shared planes
// it is given (writing its rows of the results there), stretches a photo into the model's input, or
// decodes a large photo into shared memory (shared-decode.ts), and hands every buffer of its own it
// was given back with the result.
// Between jobs it keeps only its WebAssembly memory (kernels.ts), whose size is that of the largest
// job; a buffer left here would wait for this thread's next garbage collection, which may be long
// in coming.
import { parentPort } from 'node:worker_threads';
import { TaskError, type TaskErrorCode } from '../domain/errors.ts';
import { bandBuffers, composeBand, type Band, type BandResult } from './compose.ts';
import { collectYoung } from './garbage-collection.ts';
import type { FieldsJob } from './foreground.ts';
import type { GuidedJob } from './guided-filter.ts';
import { colourFieldsRows, guidedMatteRows, stretchRgbInto, type RowSpan, type StretchJob } from './kernels.ts';
import { decodeInto, type DecodedInto, type DecodeJob } from './shared-decode.ts';

/**
 * A band of the cutout to compose, working-size planes to solve the guided filter or the colour
 * fields on, a photo to stretch into the model's input, or one to decode.
 */
export type BandRequest =
  | { id: number; band: Band }
  | { id: number; guided: GuidedJob; rows: RowSpan }
  | { id: number; colours: FieldsJob; rows: RowSpan }
  | { id: number; stretch: StretchJob }
  | { id: number; decode: DecodeJob };
/** A failure carries a task error's code when it was one (a photo's decode), to be thrown again as that. */
export type BandReply =
  | { id: number; out: Uint8Array }
  | { id: number; composed: BandResult }
  | { id: number; solved: true }
  | { id: number; decoded: DecodedInto }
  | { id: number; error: string; code?: TaskErrorCode };

const port = parentPort!;

const failure = (id: number, err: unknown): BandReply =>
  err instanceof TaskError ? { id, error: err.message, code: err.code } : { id, error: err instanceof Error ? err.message : String(err) };

port.on('message', (request: BandRequest) => {
  const { id } = request;
  if ('decode' in request) {
    // The decode itself runs in libvips' threads: bands sent meanwhile are composed as it goes on.
    decodeInto(request.decode).then(
      (decoded) => {
        port.postMessage({ id, decoded } satisfies BandReply);
        // The photo as sharp decoded it is garbage now that it is copied: freed at once.
        collectYoung();
      },
      (err: unknown) => port.postMessage(failure(id, err)),
    );
    return;
  }
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
    port.postMessage(failure(id, err), buffers);
  }
});
