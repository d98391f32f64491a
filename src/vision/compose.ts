// Turns the model's mask into the cutout's alpha channel at the source's full size.
import sharp from 'sharp';
import type { DecodedImage } from './decode.ts';
import { modelSize } from './model.ts';

/** Raw RGBA pixels of the cutout, the source's size: its colours, the mask (times any alpha it had) as alpha. */
export async function composeCutout(image: DecodedImage, mask: Float32Array): Promise<Buffer> {
  const { width, height } = image;
  const single = { raw: { width, height, channels: 1 as const } };
  const alpha = await sharp(maskToBytes(mask), { raw: { width: modelSize, height: modelSize, channels: 1 } })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .toColourspace('b-w')
    .raw()
    .toBuffer();
  const source = sharp(image.pixels, { raw: { width, height, channels: image.channels } });
  // Colours under fully transparent pixels are zeroed in both branches: kept, they would carry the
  // whole removed background inside the file (and made a PNG 5–8× larger in our measurements).
  if (image.channels === 3) {
    const visible = await sharp(alpha, single).threshold(1).toColourspace('b-w').raw().toBuffer();
    return source.boolean(visible, 'and', single).joinChannel(alpha, single).raw().toBuffer();
  }
  // The source has its own transparency: multiply, so what was transparent stays transparent.
  // `dest-in` scales the source's alpha by the overlay's (grey + alpha = mask) and keeps its colour where
  // any alpha remains.
  const overlay = await sharp(alpha, single).joinChannel(alpha, single).raw().toBuffer();
  return source.composite([{ input: overlay, raw: { width, height, channels: 2 }, blend: 'dest-in' }]).raw().toBuffer();
}

/** Probabilities in [0, 1] → bytes; a clamped array rounds and clamps on assignment. */
export function maskToBytes(mask: Float32Array): Uint8ClampedArray {
  const bytes = new Uint8ClampedArray(mask.length);
  for (let i = 0; i < mask.length; i++) bytes[i] = mask[i]! * 255;
  return bytes;
}
