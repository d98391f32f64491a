// Scales a source down to a pixel budget before segmentation; used for free-plan web previews,
// which are cheaper to make at the smaller size and never exceed it.
import sharp from 'sharp';
import { decodableBytes, inSourceColours, readHeader } from './decode.ts';

/** The largest upright size with the source's aspect ratio and at most `budget` pixels. */
export function fitToPixels(width: number, height: number, budget: number): { width: number; height: number } {
  if (width * height <= budget) return { width, height };
  const scale = Math.sqrt(budget / (width * height));
  let w = Math.max(1, Math.floor(width * scale));
  let h = Math.max(1, Math.floor(height * scale));
  while (w * h > budget) {
    if (w >= h) w -= 1;
    else h -= 1;
  }
  return { width: w, height: h };
}

/**
 * Returns the input unchanged when it fits the budget; otherwise an upright, lossless PNG of at
 * most `budget` pixels (a source's own transparency is kept). Refuses what the pipeline refuses.
 */
export async function downscaleToPixels(input: Buffer, budget: number, maxPixels: number): Promise<Buffer> {
  const header = await readHeader(input, maxPixels);
  if (header.width * header.height <= budget) return input;
  const size = fitToPixels(header.width, header.height, budget);
  return inSourceColours(sharp(await decodableBytes(input, header, maxPixels), { limitInputPixels: maxPixels }), header)
    .autoOrient()
    .resize({ width: size.width, height: size.height, fit: 'fill' })
    .png()
    .toBuffer();
}
