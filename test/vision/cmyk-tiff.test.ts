// CMYK TIFFs whose samples are deeper than libvips reads by their range, with the real model.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import sharp from 'sharp';
import { TaskError } from '../../src/domain/errors.ts';
import { readHeader } from '../../src/vision/decode.ts';
import { openPhoto } from '../../src/vision/photo.ts';
import { loadSegmenter, removeBackground, type Segmenter } from '../../src/vision/remove-background.ts';
import { fixture, fixturePhoto, groundTruth, iou } from '../support/fixtures.ts';
import { tiffOf } from '../support/tiff.ts';
import { decodeCutout, defaults } from './cutout.ts';

const name = 'am-gt02';

let segmenter: Segmenter;
before(async () => {
  segmenter = await loadSegmenter({ threads: 2 });
});

/** The fixture as 8-bit CMYK samples (0 no ink) as sharp separates it, at `size` or its own size; with alpha rising left to right when `channels` is 5. */
async function cmykSamples(channels: 4 | 5, size?: { width: number; height: number }): Promise<{ width: number; height: number; samples: Buffer }> {
  const photo = size ? sharp(fixturePhoto(name)).resize(size.width, size.height, { fit: 'fill' }) : sharp(fixturePhoto(name));
  const { data, info } = await photo.toColourspace('cmyk').raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  if (channels === 4) return { width, height, samples: data };
  const samples = Buffer.alloc(width * height * 5);
  for (let pixel = 0; pixel < width * height; pixel++) {
    data.copy(samples, pixel * 5, pixel * 4, pixel * 4 + 4);
    samples[pixel * 5 + 4] = Math.round(((pixel % width) * 255) / (width - 1));
  }
  return { width, height, samples };
}

async function decoded(tiff: Buffer): Promise<Buffer> {
  return (await (await openPhoto(tiff, await readHeader(tiff, defaults.maxPixels), defaults.maxPixels)).decoded).pixels;
}

function worstDifference(a: Buffer, b: Buffer): number {
  assert.equal(a.length, b.length);
  return Math.max(...a.map((value, i) => Math.abs(value - b[i]!)));
}

/** sharp's own CMYK profile, as it embeds it. */
async function cmykProfile(): Promise<Buffer> {
  const tiff = await sharp({ create: { width: 1, height: 1, channels: 3, background: '#808080' } }).withIccProfile('cmyk').tiff().toBuffer();
  return (await sharp(tiff).metadata()).icc!;
}

describe('CMYK TIFF with 32-bit samples', () => {
  for (const [channels, layout] of [[4, 'CMYK'], [5, 'CMYK with alpha']] as const) {
    it(`decodes 32-bit unsigned ${layout} samples, with or without a CMYK profile, to the colours of the 8-bit original`, async () => {
      const { width, height, samples } = await cmykSamples(channels, { width: 48, height: 32 });
      const cmyk = { width, height, channels, cmyk: true } as const;
      for (const icc of [undefined, await cmykProfile()]) {
        const eightBit = await decoded(tiffOf({ ...cmyk, bits: 8, format: 'uint', samples, icc }));
        const deep = await decoded(tiffOf({ ...cmyk, bits: 32, format: 'uint', samples: Uint32Array.from(samples, (v) => v * 0x01010101), icc }));
        assert.equal(worstDifference(deep, eightBit), 0, 'the 32-bit file decodes unlike its 8-bit original');
        // The 8-bit original itself is the photo through a CMYK profile and back (about 10.6 levels
        // off on average, the profile's narrower gamut): a misread of the ink would be far further off.
        const srgb = await sharp(fixturePhoto(name)).resize(width, height, { fit: 'fill' }).raw().toBuffer();
        const colour = (i: number): number => eightBit[Math.floor(i / 3) * (channels - 1) + (i % 3)]!;
        const mean = srgb.reduce((sum, value, i) => sum + Math.abs(value - colour(i)), 0) / srgb.length;
        assert.ok(mean < 16, `the 8-bit CMYK original is ${mean.toFixed(1)} levels off the photo on average`);
      }
    });
  }

  it('cuts out a CMYK TIFF with 32-bit unsigned samples', async () => {
    const { width, height, samples } = await cmykSamples(4);
    const tiff = tiffOf({ width, height, channels: 4, cmyk: true, bits: 32, format: 'uint', samples: Uint32Array.from(samples, (v) => v * 0x01010101) });
    const cutout = await decodeCutout((await removeBackground(segmenter, tiff, defaults)).data);
    assert.deepEqual([cutout.width, cutout.height, cutout.channels], [fixture(name).width, fixture(name).height, 4]);
    const score = iou(cutout.alpha, await groundTruth(name));
    assert.ok(score >= 0.8, `IoU ${score.toFixed(3)} < 0.8`);
  });

  it('refuses a CMYK TIFF with float samples as unsupported_image, saying that their range is not agreed', async () => {
    const { width, height, samples } = await cmykSamples(4, { width: 48, height: 32 });
    const tiff = tiffOf({ width, height, channels: 4, cmyk: true, bits: 32, format: 'float', samples: Float32Array.from(samples, (v) => v / 255) });
    await assert.rejects(removeBackground(segmenter, tiff, defaults), (err) => {
      assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
      assert.equal(err.code, 'unsupported_image');
      assert.match(err.message, /^CMYK TIFF images with float samples are not supported/);
      return true;
    });
  });
});
