// A thread of the band pool (cutout-bands.ts): composes the band it is given (and deflates it for a
// PNG when asked), or solves the guided filter's coefficients or the colour fields over the planes
// it is given, and hands every buffer back with the result. Between jobs it keeps only its WebAssembly memory (kernels.ts), whose
// size is that of the largest job; a buffer left here would wait for this thread's next garbage
// collection, which may be long in coming.
import { parentPort } from 'node:worker_threads';
import { bandBuffers, composeBand, type Band } from './compose.ts';
import type { GuidedJob } from './guided-filter.ts';
import { colourFieldsInPlace, guidedMatteInPlace } from './kernels.ts';
import { deflateBand, type DeflatedBand } from './png.ts';

/** A band of the cutout to compose, or working-size planes to solve the guided filter or the colour fields on. */
export type BandRequest =
  /** With `png`, the band's scanlines are also deflated here (see png.ts). */
  | { id: number; band: Band; png?: { last: boolean } }
  | { id: number; guided: GuidedJob }
  | { id: number; colours: { planes: Float32Array[]; width: number; height: number; wideRadius: number; narrowRadius: number } };
export type BandReply = { id: number; out: Uint8Array; png?: DeflatedBand } | { id: number; planes: Float32Array[] } | { id: number; error: string };

const port = parentPort!;

port.on('message', (request: BandRequest) => {
  const { id } = request;
  const buffers = 'band' in request ? bandBuffers(request.band) : ('guided' in request ? request.guided : request.colours).planes.map((p) => p.buffer as ArrayBuffer);
  try {
    if ('band' in request) {
      const adler32 = composeBand(request.band);
      const { out } = request.band;
      if (request.png && adler32 !== null) {
        // A Buffer from zlib may be a view into a larger allocation: only a whole buffer may move.
        const compressed = deflateBand(out, request.png.last);
        const deflated = compressed.byteOffset === 0 && compressed.byteLength === compressed.buffer.byteLength ? compressed : compressed.slice();
        port.postMessage({ id, out, png: { deflated, adler32, length: out.length } } satisfies BandReply, [...buffers, deflated.buffer as ArrayBuffer]);
      } else port.postMessage({ id, out } satisfies BandReply, buffers);
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
