// The bench's image set: the shared fixtures as they are, plus 2 MP and 12 MP photos made by
// upscaling one of them (JPEG, as a phone would send), written once to a cache folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';

export const fixturesDir = path.resolve(import.meta.dirname, '../../shared/fixtures');

export interface BenchImage {
  name: string;
  /** Which row of the table it belongs to. */
  group: string;
  file: string;
}

interface ManifestEntry {
  name: string;
  image: string;
  gt: string;
}

export function readManifest(): ManifestEntry[] {
  return JSON.parse(fs.readFileSync(path.join(fixturesDir, 'manifest.json'), 'utf8')) as ManifestEntry[];
}

/** The bench's data folder: the optimised model is saved there once, as in a real data folder. */
export const benchDataDir = path.join(os.tmpdir(), 'cutout-bench', 'data');

const upscaleSource = 'am-gt07';
const upscaled = [
  { group: '2 MP', width: 1632, height: 1261 },
  { group: '12 MP', width: 4000, height: 3091 },
];

export async function benchImages(): Promise<BenchImage[]> {
  const manifest = readManifest();
  const images: BenchImage[] = manifest.map((m) => ({ name: m.name, group: 'fixtures', file: path.join(fixturesDir, m.image) }));
  const dir = path.join(os.tmpdir(), 'cutout-bench');
  fs.mkdirSync(dir, { recursive: true });
  const source = manifest.find((m) => m.name === upscaleSource);
  if (!source) throw new Error(`fixture ${upscaleSource} is missing`);
  for (const { group, width, height } of upscaled) {
    const file = path.join(dir, `${upscaleSource}-${width}x${height}.jpg`);
    if (!fs.existsSync(file)) {
      await sharp(path.join(fixturesDir, source.image)).resize(width, height, { kernel: 'lanczos3' }).jpeg({ quality: 92 }).toFile(file);
    }
    images.push({ name: `${upscaleSource}@${group}`, group, file });
  }
  return images;
}
