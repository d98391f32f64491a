// The output formats' limits, and the cutout's WebP encoding: lossless so that the alpha survives exactly.
import sharp from 'sharp';
import type { OutputFormat } from '../domain/removal-request.ts';
import { TaskError } from '../domain/errors.ts';

/** WebP stores each side in 14 bits. */
const maxWebpSide = 16383;

/** Refuses, before any work is done, a cutout the requested format cannot hold. */
export function assertEncodable(width: number, height: number, format: OutputFormat): void {
  if (format === 'webp' && Math.max(width, height) > maxWebpSide) {
    throw new TaskError('image_too_large', `WebP output is limited to ${maxWebpSide} pixels per side and the image is ${width}×${height}; ask for png instead.`);
  }
}

/**
 * Lossless WebP at effort 0, sharp's fastest: higher efforts only trade time for a smaller file.
 * (PNG is encoded in the band threads: png-scanlines.ts, png-file.ts.)
 */
export async function encodeWebp(rgba: Buffer, width: number, height: number): Promise<Buffer> {
  return sharp(rgba, { raw: { width, height, channels: 4 } }).webp({ lossless: true, effort: 0 }).toBuffer();
}
