// Builds the model's input: the image stretched to modelSize², as a normalised CHW float tensor.
import sharp from 'sharp';
import type { DecodedImage } from './decode.ts';
import { modelSize } from './model.ts';

export async function toModelInput(image: DecodedImage): Promise<Float32Array> {
  const rgb = await sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: image.channels } })
    // The model sees a transparent source as shown over mid-grey, which normalises to zero input,
    // rather than whatever colours happen to be stored under its transparent pixels.
    .flatten({ background: { r: 128, g: 128, b: 128 } })
    // Stretched, not letterboxed: ISNet was trained on images resized to the square this way.
    .resize(modelSize, modelSize, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  return rgbToTensor(rgb);
}

/** Interleaved RGB bytes → planar floats, (value − 128) / 256 as the model was trained. */
export function rgbToTensor(rgb: Uint8Array): Float32Array {
  const plane = modelSize * modelSize;
  if (rgb.length !== plane * 3) throw new Error(`expected ${plane * 3} RGB bytes, got ${rgb.length}`);
  const tensor = new Float32Array(plane * 3);
  for (let i = 0, p = 0; i < plane; i++, p += 3) {
    tensor[i] = (rgb[p]! - 128) / 256;
    tensor[plane + i] = (rgb[p + 1]! - 128) / 256;
    tensor[2 * plane + i] = (rgb[p + 2]! - 128) / 256;
  }
  return tensor;
}

/**
 * Mirrors every row of `width` values. Rows are contiguous in CHW tensors and in masks, so the
 * same function flips the input and un-flips the output.
 */
export function mirrorRows(data: Float32Array, width: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let row = 0; row < data.length; row += width) {
    for (let x = 0, last = row + width - 1; x < width; x++) out[row + x] = data[last - x]!;
  }
  return out;
}
