// Assembles the cutout's RGBA pixels at the source's full size from the photo and the matte, a band
// of rows at a time (cutout-bands.ts runs the bands in parallel threads).
import type { DecodedImage } from './decode.ts';
import { decontaminator } from './foreground.ts';
import { fullSizeAlphaRows, type AlphaRowWriter } from './guided-filter.ts';
import type { Matte } from './matte.ts';

/** Writes a row of the matte's full-size alpha: the guided filter applied there, or a copy of the bytes it already has. */
function alphaRows(image: DecodedImage, matte: Matte): AlphaRowWriter {
  const { alpha } = matte;
  if (alpha.kind === 'bytes') return (y, out) => out.set(alpha.data.subarray(y * image.width, (y + 1) * image.width));
  return fullSizeAlphaRows(alpha.coefficients, image.pixels, image.channels, image.width, image.height, alpha.curve);
}

/**
 * Writes rows [from, to) of the cutout into `out` (RGBA for the whole image, zero-filled): the
 * matte's alpha (times any alpha the source had, so what was transparent stays transparent) and the
 * photo's colours, re-estimated where the alpha is partial.
 */
export function composeRows(image: DecodedImage, matte: Matte, from: number, to: number, out: Uint8Array): void {
  const { width, height, channels, pixels } = image;
  const writeAlpha = alphaRows(image, matte);
  const row = new Uint8Array(width);
  const fix = matte.colours ? decontaminator(matte.colours, width, height) : null;
  const colour = new Float64Array(3);
  for (let y = from; y < to; y++) {
    writeAlpha(y, row);
    for (let x = 0, o = y * width; x < width; x++, o++) {
      const ours = row[x]!;
      const alpha = channels === 4 ? Math.round((ours * pixels[o * 4 + 3]!) / 255) : ours;
      // Colours under fully transparent pixels stay zero: kept, they would carry the whole removed
      // background inside the file (and made a PNG 5–8× larger in our measurements).
      if (alpha === 0) continue;
      const p = o * channels;
      const q = o * 4;
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
  }
}
