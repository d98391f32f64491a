// The real photos and ground-truth masks in ../shared/fixtures, and how to score a mask against them.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

export const fixturesDir = path.resolve(process.env.CUTOUT_FIXTURES_DIR ?? path.join(import.meta.dirname, '../../../shared/fixtures'));

export interface Fixture {
  name: string;
  /** Paths relative to fixturesDir. */
  image: string;
  gt: string;
  width: number;
  height: number;
}

export function fixture(name: string): Fixture {
  const manifest = JSON.parse(fs.readFileSync(path.join(fixturesDir, 'manifest.json'), 'utf8')) as Fixture[];
  const found = manifest.find((entry) => entry.name === name);
  if (!found) throw new Error(`no fixture named ${name} in ${fixturesDir}`);
  return found;
}

export function fixturePhoto(name: string): Buffer {
  return fs.readFileSync(path.join(fixturesDir, fixture(name).image));
}

/** The ground truth as one byte per pixel, 255 = foreground. */
export async function groundTruth(name: string): Promise<Buffer> {
  return sharp(path.join(fixturesDir, fixture(name).gt)).extractChannel(0).raw().toBuffer();
}

/** Intersection over union of two same-size 8-bit masks, each thresholded at `threshold`. */
export function iou(a: Uint8Array, b: Uint8Array, threshold = 128): number {
  if (a.length !== b.length) throw new Error(`masks differ in size: ${a.length} vs ${b.length}`);
  let intersection = 0;
  let union = 0;
  for (let i = 0; i < a.length; i++) {
    const inA = a[i]! >= threshold;
    const inB = b[i]! >= threshold;
    if (inA && inB) intersection++;
    if (inA || inB) union++;
  }
  return union === 0 ? 1 : intersection / union;
}
