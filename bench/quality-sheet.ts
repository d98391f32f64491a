// The contact sheet a person looks at: per image, photo | ground truth | baseline | ours over a
// checkerboard, then both over a solid colour, where a halo of the old background shows.
import sharp, { type OverlayOptions } from 'sharp';
import type { DecodedImage } from '../src/vision/decode.ts';

export interface SheetRow {
  name: string;
  image: DecodedImage;
  gt: Uint8Array;
  baseline: Uint8Array;
  ours: Uint8Array;
}

const tileHeight = 200;
const solid = [20, 160, 70];

type Background = (x: number, y: number) => number[];
const checker: Background = (x, y) => (((x >> 3) + (y >> 3)) & 1 ? [200, 200, 200] : [255, 255, 255]);

async function tile(rgba: Uint8Array, width: number, height: number, w: number, h: number, background: Background): Promise<Buffer> {
  const small = await sharp(rgba, { raw: { width, height, channels: 4 } }).resize(w, h, { fit: 'fill' }).raw().toBuffer();
  const out = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const a = small[i * 4 + 3]! / 255;
      const bg = background(x, y);
      for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(small[i * 4 + c]! * a + bg[c]! * (1 - a));
    }
  }
  return out;
}

export async function contactSheet(rows: SheetRow[], file: string): Promise<void> {
  const layers: OverlayOptions[] = [];
  let top = 0;
  let sheetWidth = 0;
  for (const row of rows) {
    const { width, height, pixels, channels } = row.image;
    const w = Math.max(1, Math.round((width * tileHeight) / height));
    const opaque = new Uint8Array(width * height * 4);
    const truth = new Uint8Array(width * height * 4);
    for (let i = 0; i < width * height; i++) {
      for (let c = 0; c < 3; c++) {
        opaque[i * 4 + c] = pixels[i * channels + c]!;
        truth[i * 4 + c] = row.gt[i]!;
      }
      opaque[i * 4 + 3] = 255;
      truth[i * 4 + 3] = 255;
    }
    const tiles = await Promise.all([
      tile(opaque, width, height, w, tileHeight, checker),
      tile(truth, width, height, w, tileHeight, checker),
      tile(row.baseline, width, height, w, tileHeight, checker),
      tile(row.ours, width, height, w, tileHeight, checker),
      tile(row.baseline, width, height, w, tileHeight, () => solid),
      tile(row.ours, width, height, w, tileHeight, () => solid),
    ]);
    tiles.forEach((t, i) => layers.push({ input: t, raw: { width: w, height: tileHeight, channels: 3 }, left: i * (w + 4), top }));
    sheetWidth = Math.max(sheetWidth, 6 * (w + 4));
    top += tileHeight + 4;
  }
  await sharp({ create: { width: sheetWidth, height: Math.max(1, top), channels: 3, background: { r: 60, g: 60, b: 60 } } })
    .composite(layers)
    .png()
    .toFile(file);
}
