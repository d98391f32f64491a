// Assembles the cutout's RGBA pixels at the source's full size from the photo and the matte, a band
// of rows at a time (cutout-bands.ts runs the bands in parallel threads).
import { align16, kernelsWith } from './kernels.ts';
import type { Matte } from './matte.ts';

/** Rows [from, to) of a width × height cutout: the photo's and the matte's rows in, RGBA rows out. */
export interface Band {
  width: number;
  height: number;
  channels: 3 | 4;
  from: number;
  to: number;
  /** The photo's rows [from, to), interleaved 8-bit. */
  pixels: Uint8Array;
  /** The matte; alpha bytes, when it has them, are rows [from, to) only. */
  matte: Matte;
  /** Receives RGBA rows [from, to), every byte. */
  out: Uint8Array;
}

/** Every buffer a band holds, each once: the list of what moves between the threads. */
export function bandBuffers(band: Band): ArrayBuffer[] {
  const { alpha, colours } = band.matte;
  const views: ArrayBufferView[] = [band.pixels, band.out];
  if (alpha.kind === 'bytes') views.push(alpha.data);
  else views.push(...alpha.coefficients.a, alpha.coefficients.b);
  if (colours) views.push(...colours.foreground, ...colours.background);
  return [...new Set(views.map((v) => v.buffer as ArrayBuffer))];
}

/** Rows composed per call into the kernels: their photo, alpha and RGBA bytes stay within this, so a thread's memory does not grow with the image. */
const defaultChunkBytes = 4 << 20;

/**
 * Composes a band in WebAssembly (kernels/compose.ts): the matte's alpha — the guided filter
 * applied at full size through the curve, or the alpha bytes it has — times any alpha the source
 * had, so what was transparent stays transparent; the photo's colours, re-estimated from the colour
 * fields where the alpha is partial; zero under fully transparent pixels. The working-size fields
 * are copied in once, then the rows in chunks of at most `chunkBytes` (at least one row).
 */
export function composeBand(band: Band, chunkBytes = defaultChunkBytes): void {
  const { width, height, channels, from, to, pixels, matte, out } = band;
  const { alpha, colours } = matte;
  const guided = alpha.kind === 'guided' ? alpha : null;
  const cw = guided?.coefficients.width ?? 0, ch = guided?.coefficients.height ?? 0;
  const fw = colours?.width ?? 0, fh = colours?.height ?? 0;
  // Offset 0 stands for "none" in the kernel's arguments, so the layout starts above it.
  let end = 64;
  const take = (bytes: number): number => {
    const at = end;
    end += align16(bytes);
    return at;
  };
  const coefficientsAt = guided ? take(4 * cw * ch * 4) : 0;
  const curveAt = guided ? take(guided.curve.length) : 0;
  const settledAt = guided ? take(cw * ch) : 0;
  const coloursAt = colours ? take(6 * fw * fh * 4) : 0;
  const rowBytes = width * (channels + 4 + 1);
  const chunkRows = Math.max(1, Math.min(to - from, Math.floor(chunkBytes / rowBytes)));
  const pixelsAt = take(chunkRows * width * channels);
  const outAt = take(chunkRows * width * 4);
  const bytesAt = guided ? 0 : take(chunkRows * width);
  const { kernels: k } = kernelsWith(0);
  const workAt = take(k.composeWorkSize(width, cw, fw));
  const { memory } = kernelsWith(end);
  const planes = (at: number, list: Float32Array[]) => list.forEach((plane, i) => new Float32Array(memory, at + i * plane.length * 4, plane.length).set(plane));
  if (guided) {
    planes(coefficientsAt, [...guided.coefficients.a, guided.coefficients.b]);
    new Uint8Array(memory, curveAt, guided.curve.length).set(guided.curve);
    k.settleCells(coefficientsAt, cw, ch, curveAt, guided.curve.length - 1, settledAt);
  }
  if (colours) planes(coloursAt, [...colours.foreground, ...colours.background]);
  for (let first = from; first < to; first += chunkRows) {
    const rows = Math.min(chunkRows, to - first);
    const offset = (first - from) * width;
    new Uint8Array(memory, pixelsAt, rows * width * channels).set(pixels.subarray(offset * channels, (offset + rows * width) * channels));
    if (alpha.kind === 'bytes') new Uint8Array(memory, bytesAt, rows * width).set(alpha.data.subarray(offset, offset + rows * width));
    k.composeRows(
      pixelsAt, outAt, channels, width, height, first, rows,
      bytesAt, coefficientsAt, cw, ch, curveAt, guided ? guided.curve.length - 1 : 0, settledAt,
      coloursAt, fw, fh, workAt,
    );
    out.set(new Uint8Array(memory, outAt, rows * width * 4), offset * 4);
  }
}
