// Assembles the cutout's RGBA pixels at the source's full size from the photo and the matte.
import type { DecodedImage } from './decode.ts';
import { decontaminator } from './foreground.ts';
import type { Matte } from './matte.ts';

/**
 * Raw RGBA pixels of the cutout: the matte's alpha (times any alpha the source had, so what was
 * transparent stays transparent) and the photo's colours, re-estimated where the alpha is partial.
 */
export function composeCutout(image: DecodedImage, matte: Matte): Buffer {
  const { width, height, channels, pixels } = image;
  const out = Buffer.alloc(width * height * 4);
  const fix = matte.colours ? decontaminator(matte.colours, width, height) : null;
  const colour = new Float64Array(3);
  for (let y = 0, o = 0; y < height; y++) {
    for (let x = 0; x < width; x++, o++) {
      const ours = matte.alpha[o]!;
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
  return out;
}
