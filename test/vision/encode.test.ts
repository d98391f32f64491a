// The encoders stay lossless: the alpha (and for PNG every byte) comes back exactly; a PNG put
// together from bands deflated apart is one valid file.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { encodeWebp } from '../../src/vision/encode.ts';
import { adler32Combine, deflateBand, pngFromBands } from '../../src/vision/png.ts';

/** Adler-32 as RFC 1950 defines it, a byte at a time. */
function plainAdler32(bytes: Uint8Array): number {
  let a = 1, b = 0;
  for (const v of bytes) {
    a = (a + v) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** The data of every IDAT chunk of a PNG, joined. */
function idatOf(png: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') parts.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  return Buffer.concat(parts);
}

/** A soft-edged cutout: a gradient alpha with zeroed colour under the fully transparent part. */
function cutoutPixels(width: number, height: number): Buffer {
  const rgba = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      const alpha = Math.max(0, Math.min(255, Math.round(((x - width / 4) / (width / 2)) * 255)));
      if (alpha > 0) rgba.set([(x * 7) % 256, (y * 3) % 256, (x + y) % 256], p);
      rgba[p + 3] = alpha;
    }
  }
  return rgba;
}

describe('encoding a cutout', () => {
  const [width, height] = [321, 207];
  const rgba = cutoutPixels(width, height);

  it('writes a PNG from bands deflated apart that decodes to exactly the same pixels, its zlib checksum whole', async () => {
    const stride = width * 4 + 1;
    const scanlines = new Uint8Array(height * stride);
    for (let y = 0; y < height; y++) scanlines.set(rgba.subarray(y * width * 4, (y + 1) * width * 4), y * stride + 1);
    const cuts = [0, 70, 71, 207];
    const bands = cuts.slice(1).map((end, i) => {
      const rows = scanlines.subarray(cuts[i]! * stride, end * stride);
      return { deflated: deflateBand(rows, end === height), adler32: plainAdler32(rows), length: rows.length };
    });
    const png = pngFromBands(width, height, bands);
    assert.equal((await sharp(png).metadata()).format, 'png');
    assert.ok((await sharp(png).raw().toBuffer()).equals(rgba));
    // zlib checks the stream's Adler-32 against what it inflates.
    assert.ok(zlib.inflateSync(idatOf(png)).equals(scanlines));
  });

  it('combines the Adler-32 of two byte strings into that of their concatenation', () => {
    const bytes = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 256 || 255);
    for (const cut of [0, 1, 5552, 65521, 70_000, 200_000]) {
      const combined = adler32Combine(plainAdler32(bytes.subarray(0, cut)), plainAdler32(bytes.subarray(cut)), bytes.length - cut);
      assert.equal(combined, plainAdler32(bytes), `cut at ${cut}`);
    }
  });

  it('writes a lossless WebP whose alpha and visible colours are exact', async () => {
    const webp = await encodeWebp(rgba, width, height);
    assert.equal((await sharp(webp).metadata()).format, 'webp');
    const decoded = await sharp(webp).raw().toBuffer();
    for (let p = 0; p < rgba.length; p += 4) {
      assert.equal(decoded[p + 3], rgba[p + 3], `alpha at pixel ${p / 4}`);
      if (rgba[p + 3]! > 0) assert.deepEqual([...decoded.subarray(p, p + 3)], [...rgba.subarray(p, p + 3)], `colour at pixel ${p / 4}`);
    }
  });
});
