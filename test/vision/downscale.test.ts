import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { downscaleToPixels, fitToPixels } from '../../src/vision/downscale.ts';
import { fixtureImage } from '../support/image-server.ts';
import { tiffOf } from '../support/tiff.ts';

test('a size is fitted to the pixel budget keeping its aspect ratio, and never enlarged', () => {
  for (const [w, h] of [[800, 618], [4032, 3024], [643, 800], [10_000, 3], [3, 10_000], [501, 499]] as const) {
    const fitted = fitToPixels(w, h, 250_000);
    assert.ok(fitted.width * fitted.height <= 250_000, `${w}×${h} → ${fitted.width}×${fitted.height}`);
    assert.ok(fitted.width >= 1 && fitted.height >= 1);
    if (w * h > 250_000 && Math.min(w, h) > 100) {
      assert.ok(fitted.width * fitted.height > 245_000, 'uses nearly all of the budget');
      assert.ok(Math.abs(fitted.width / fitted.height - w / h) / (w / h) < 0.01, 'keeps the aspect ratio');
    }
  }
  assert.deepEqual(fitToPixels(300, 200, 250_000), { width: 300, height: 200 });
});

test('an image over the budget is scaled down upright; one within it is passed through untouched', async () => {
  const photo = fixtureImage('am-gt07.png');
  const small = await downscaleToPixels(photo, 250_000, 50_000_000);
  const meta = await sharp(small).metadata();
  assert.equal(meta.format, 'png');
  assert.ok((meta.width ?? 0) * (meta.height ?? 0) <= 250_000);
  const rotated = await sharp({ create: { width: 1000, height: 500, channels: 3, background: '#808080' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
  const upright = await sharp(await downscaleToPixels(rotated, 250_000, 50_000_000)).metadata();
  assert.ok((upright.height ?? 0) > (upright.width ?? 0), 'EXIF orientation is applied');
  const tiny = fixtureImage('horse-279.png');
  assert.equal(await downscaleToPixels(tiny, 250_000, 50_000_000), tiny);
});

test('a 32-bit TIFF over the budget is scaled down with the colours of its 8-bit original', async () => {
  const [width, height] = [600, 500];
  const grey = await sharp(fixtureImage('am-gt07.png')).resize(width, height, { fit: 'fill' }).toColourspace('b-w').raw().toBuffer();
  const scaled = async (tiff: Buffer): Promise<Buffer> => sharp(await downscaleToPixels(tiff, 100_000, 50_000_000)).raw().toBuffer();
  const deep = await scaled(tiffOf({ width, height, channels: 1, bits: 32, format: 'uint', samples: Uint32Array.from(grey, (v) => v * 0x01010101) }));
  const eightBit = await scaled(tiffOf({ width, height, channels: 1, bits: 8, format: 'uint', samples: grey }));
  assert.equal(deep.length, eightBit.length);
  assert.ok(deep.every((value, i) => Math.abs(value - eightBit[i]!) <= 1), 'the preview is off its 8-bit original');
});
