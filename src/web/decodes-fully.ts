// An upload's header can be valid while its data is cut off or damaged; the worker (and the page
// showing the original) would then fail to decode it after a task was made and a credit held.
import sharp from 'sharp';

/** Side of the decode check's output: JPEG decodes at a reduced scale, so the check stays cheap. */
const checkSide = 256;

/**
 * Decodes the whole image with the strictness the worker uses (sharp's default, failing on any
 * decoder warning such as a premature end), at a small size so memory stays low for large photos.
 */
export async function decodesFully(data: Buffer, maxPixels: number): Promise<boolean> {
  try {
    await sharp(data, { limitInputPixels: maxPixels }).resize({ width: checkSide, height: checkSide, fit: 'inside' }).raw().toBuffer();
    return true;
  } catch {
    return false;
  }
}
