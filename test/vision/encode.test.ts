// The fast WebP settings stay lossless: the alpha and every visible colour come back exactly.
// (PNG cutouts are encoded in the band threads: png.test.ts.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { encodeWebp } from '../../src/vision/encode.ts';

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

describe('encodeWebp', () => {
  const [width, height] = [321, 207];
  const rgba = cutoutPixels(width, height);

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
