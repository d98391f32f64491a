// Assembles the cutout's RGBA pixels at the source's full size from the photo and the matte, a band
// of rows at a time (cutout-bands.ts runs the bands in parallel threads).
import os from 'node:os';
import { decontaminator } from './foreground.ts';
import { fullSizeAlphaRows, type AlphaRowWriter } from './guided-filter.ts';
import type { Matte } from './matte.ts';

const littleEndian = os.endianness() === 'LE';

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
  /** RGBA rows [from, to), zero-filled. */
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

/** Writes a row of the matte's full-size alpha: the guided filter applied there, or a copy of the bytes it already has. */
function alphaRows(band: Band): AlphaRowWriter {
  const { width, height, channels, from, pixels, matte } = band;
  const { alpha } = matte;
  if (alpha.kind === 'bytes') return (y, out) => out.set(alpha.data.subarray((y - from) * width, (y - from + 1) * width));
  return fullSizeAlphaRows(alpha.coefficients, pixels, channels, width, height, alpha.curve, from);
}

/**
 * Composes a band: the matte's alpha (times any alpha the source had, so what was transparent
 * stays transparent) and the photo's colours, re-estimated where the alpha is partial.
 */
export function composeBand(band: Band): void {
  const { width, height, channels, from, to, pixels, matte, out } = band;
  const writeAlpha = alphaRows(band);
  const row = new Uint8Array(width);
  const fix = matte.colours ? decontaminator(matte.colours, width, height) : null;
  const colour = new Float64Array(3);
  // Opaque pixels are written whole, as one 32-bit word in the machine's byte order.
  const out32 = new Uint32Array(out.buffer, out.byteOffset, out.length / 4);
  const [r, g, b, a] = littleEndian ? [0, 8, 16, 24] : [24, 16, 8, 0];
  const opaque = (255 << a) | 0;
  for (let y = from; y < to; y++) {
    writeAlpha(y, row);
    const rowStart = (y - from) * width;
    for (let x = 0; x < width; ) {
      const ours = row[x]!;
      // Colours under fully transparent pixels stay zero: kept, they would carry the whole removed
      // background inside the file (and made a PNG 5–8× larger in our measurements). Runs of them are
      // skipped and runs of opaque pixels copied in loops of their own: most of a photo is one or the other.
      if (ours === 0) {
        x++;
        while (x < width && row[x] === 0) x++;
        continue;
      }
      if (ours === 255 && channels === 3) {
        let o = rowStart + x;
        x++;
        while (x < width && row[x] === 255) x++;
        for (let p = o * 3, stop = rowStart + x; o < stop; o++, p += 3) out32[o] = opaque | (pixels[p]! << r) | (pixels[p + 1]! << g) | (pixels[p + 2]! << b);
        continue;
      }
      const o = rowStart + x;
      const alpha = channels === 4 ? Math.round((ours * pixels[o * 4 + 3]!) / 255) : ours;
      const p = o * channels;
      const q = o * 4;
      if (alpha !== 0) {
        if (fix && ours < 255) {
          colour[0] = pixels[p]!;
          colour[1] = pixels[p + 1]!;
          colour[2] = pixels[p + 2]!;
          fix(x, y, ours / 255, colour);
          out[q] = Math.round(colour[0]);
          out[q + 1] = Math.round(colour[1]);
          out[q + 2] = Math.round(colour[2]);
        } else {
          out[q] = pixels[p]!;
          out[q + 1] = pixels[p + 1]!;
          out[q + 2] = pixels[p + 2]!;
        }
        out[q + 3] = alpha;
      }
      x++;
    }
  }
}
