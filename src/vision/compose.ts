// Assembles the cutout's RGBA pixels at the source's full size from the photo and the matte, a band
// of rows at a time (cutout-bands.ts runs the bands in parallel threads), and for a PNG compresses
// them there too (png-scanlines.ts).
import { align16, kernelsWith } from './kernels.ts';
import type { Matte } from './matte.ts';
import { samplePosition } from './planes.ts';
import type { PngBand } from './png-file.ts';
import { DeflateStream } from './png-deflate.ts';
import { ScanlineCompressor, type PngDeflater } from './png-scanlines.ts';

/** Rows [from, to) of a width × height cutout: the photo's and the matte's rows in, RGBA rows out. */
export interface Band {
  width: number;
  height: number;
  channels: 3 | 4;
  from: number;
  to: number;
  /** The photo's rows [from, to), interleaved 8-bit. */
  pixels: Uint8Array;
  /**
   * The matte; alpha bytes, when it has them, are rows [from, to) only, and its working-size planes
   * may hold only the rows that these sample (see sampledRows), from `cellsFrom` (coefficients) and
   * `coloursFrom` (colour fields) on; 0 or absent: from the first.
   */
  matte: Matte;
  cellsFrom?: number;
  coloursFrom?: number;
  /**
   * Where the rows go: RGBA bytes into `out` (every byte written), or compressed PNG image data
   * (deflated by png-deflate.ts unless the bench asks for another way).
   */
  target: { kind: 'rgba'; out: Uint8Array } | { kind: 'png'; deflater?: PngDeflater };
}

/** What a composed band hands back: its RGBA rows, or its compressed PNG scanlines. */
export type BandResult = { kind: 'rgba'; out: Uint8Array } | { kind: 'png'; png: PngBand };

/**
 * Rows [start, end) of a working-size axis of `size` rows that full-size rows [from, to) of `height`
 * sample bilinearly (kernels/compose.ts, sampleRow), with one more on each side against rounding.
 */
export function sampledRows(from: number, to: number, height: number, size: number): { start: number; end: number } {
  const at = (y: number): number => samplePosition(y, 0, size / height, size);
  return { start: Math.max(0, Math.floor(at(from)) - 1), end: Math.min(size, Math.floor(at(to - 1)) + 3) };
}

/** Every buffer of its own a band holds, each once: the list of what moves between the threads (shared planes stay where they are). */
export function bandBuffers(band: Band): ArrayBuffer[] {
  const { alpha, colours } = band.matte;
  const views: ArrayBufferView[] = [band.pixels];
  if (band.target.kind === 'rgba') views.push(band.target.out);
  if (alpha.kind === 'bytes') views.push(alpha.data);
  else views.push(...alpha.coefficients.a, alpha.coefficients.b);
  if (colours) views.push(...colours.foreground, ...colours.background);
  return [...new Set(views.map((v) => v.buffer).filter((buffer): buffer is ArrayBuffer => !(buffer instanceof SharedArrayBuffer)))];
}

/** Rows composed per call into the kernels: their photo, alpha, RGBA bytes and scanlines stay within this, so a thread's memory does not grow with the image. */
const defaultChunkBytes = 4 << 20;

/**
 * Composes a band in WebAssembly (kernels/compose.ts): the matte's alpha — the guided filter
 * applied at full size through the curve, or the alpha bytes it has — times any alpha the source
 * had, so what was transparent stays transparent; the photo's colours, re-estimated from the colour
 * fields where the alpha is partial; zero under fully transparent pixels. The working-size fields
 * are copied in once, then the rows in chunks of at most `chunkBytes` (at least one row).
 */
export function composeBand(band: Band, chunkBytes = defaultChunkBytes): BandResult {
  const { width, height, channels, from, to, pixels, matte, target, cellsFrom = 0, coloursFrom = 0 } = band;
  const { alpha, colours } = matte;
  const guided = alpha.kind === 'guided' ? alpha : null;
  const cw = guided?.coefficients.width ?? 0, ch = guided?.coefficients.height ?? 0;
  const fw = colours?.width ?? 0, fh = colours?.height ?? 0;
  const cellsHeld = guided ? guided.coefficients.b.length / cw : 0;
  const coloursHeld = colours ? colours.foreground[0].length / fw : 0;
  // Offset 0 stands for "none" in the kernel's arguments, so the layout starts above it.
  let end = 64;
  const take = (bytes: number): number => {
    const at = end;
    end += align16(bytes);
    return at;
  };
  const coefficientsAt = guided ? take(4 * cw * cellsHeld * 4) : 0;
  const curveAt = guided ? take(guided.curve.length) : 0;
  const settledAt = guided ? take(cw * cellsHeld) : 0;
  const coloursAt = colours ? take(6 * fw * coloursHeld * 4) : 0;
  const deflater = target.kind === 'png' ? (target.deflater ?? 'runs') : null;
  const png = deflater !== null;
  const ownDeflate = deflater === 'runs' || deflater === 'counted';
  const scanlineBytes = width * 4 + 1;
  // A PNG chunk's scanlines, and for png-deflate.ts their tokens and the room their block may take, per row.
  const countEveryBlock = deflater === 'counted';
  const deflateBytes = ownDeflate ? DeflateStream.tokensSize(scanlineBytes, countEveryBlock) + DeflateStream.blockBound(scanlineBytes) : 0;
  const rowBytes = width * (channels + 4 + 1) + (png ? scanlineBytes : 0) + deflateBytes;
  const chunkRows = Math.max(1, Math.min(to - from, Math.floor(chunkBytes / rowBytes)));
  // The output follows the photo's rows: the kernel may read a few bytes past their end (kernels/compose.ts).
  const pixelsAt = take(chunkRows * width * channels);
  const outAt = take(chunkRows * width * 4);
  const bytesAt = guided ? 0 : take(chunkRows * width);
  const scanlinesAt = png ? take(chunkRows * scanlineBytes) : 0;
  const previousAt = png ? take(width * 4) : 0;
  const stateAt = ownDeflate ? take(16) : 0;
  const tablesAt = ownDeflate ? take(DeflateStream.tablesSize) : 0;
  const tokensAt = ownDeflate ? take(DeflateStream.tokensSize(chunkRows * scanlineBytes, countEveryBlock)) : 0;
  const deflatedAt = ownDeflate ? take(DeflateStream.blockBound(chunkRows * scanlineBytes)) : 0;
  const { kernels: k } = kernelsWith(0);
  const workAt = take(k.composeWorkSize(width, cw));
  const { memory } = kernelsWith(end);
  const compressor = deflater ? new ScanlineCompressor(k, memory, width * 4, { scanlinesAt, previousAt, stateAt, tablesAt, tokensAt, outAt: deflatedAt }, deflater) : null;
  const planes = (at: number, list: Float32Array[]) => list.forEach((plane, i) => new Float32Array(memory, at + i * plane.length * 4, plane.length).set(plane));
  if (guided) {
    planes(coefficientsAt, [...guided.coefficients.a, guided.coefficients.b]);
    new Uint8Array(memory, curveAt, guided.curve.length).set(guided.curve);
    k.settleCells(coefficientsAt, cw, cellsHeld, curveAt, guided.curve.length - 1, settledAt);
  }
  if (colours) planes(coloursAt, [...colours.foreground, ...colours.background]);
  for (let first = from; first < to; first += chunkRows) {
    const rows = Math.min(chunkRows, to - first);
    const offset = (first - from) * width;
    new Uint8Array(memory, pixelsAt, rows * width * channels).set(pixels.subarray(offset * channels, (offset + rows * width) * channels));
    if (alpha.kind === 'bytes') new Uint8Array(memory, bytesAt, rows * width).set(alpha.data.subarray(offset, offset + rows * width));
    k.composeRows(
      pixelsAt, outAt, channels, width, height, first, rows,
      bytesAt, coefficientsAt, cw, ch, cellsFrom, cellsHeld, curveAt, guided ? guided.curve.length - 1 : 0, settledAt,
      coloursAt, fw, fh, coloursFrom, coloursHeld, workAt,
    );
    if (target.kind === 'rgba') target.out.set(new Uint8Array(memory, outAt, rows * width * 4), offset * 4);
    else compressor!.add(memory, outAt, rows);
  }
  return target.kind === 'rgba' ? target : { kind: 'png', png: compressor!.finish(memory) };
}
