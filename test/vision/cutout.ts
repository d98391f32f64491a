// What the vision tests look at in a cutout: its decoded size, channel count and alpha.
import sharp from 'sharp';
import type { RemovalOptions } from '../../src/vision/remove-background.ts';

export const defaults: RemovalOptions = { subject: 'auto', precision: 'standard', format: 'png', maxPixels: 50_000_000 };

export interface DecodedCutout {
  width: number;
  height: number;
  channels: number;
  alpha: Buffer;
}

export async function decodeCutout(encoded: Buffer): Promise<DecodedCutout> {
  const { channels } = await sharp(encoded).metadata();
  const { data: alpha, info } = await sharp(encoded).extractChannel('alpha').raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels, alpha };
}
