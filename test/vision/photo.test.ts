// A large photo's model input is made from its encoded bytes while the photo is decoded (in a band
// thread, into shared memory), and its guide from that input: the same matte as from the decoded
// pixels, an upright 8-bit copy, and the decode's errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp, { type Sharp } from 'sharp';
import { TaskError } from '../../src/domain/errors.ts';
import { decodeImage, readHeader } from '../../src/vision/decode.ts';
import { computeMatte } from '../../src/vision/matte.ts';
import { modelSize, type Segmenter } from '../../src/vision/model.ts';
import { decodedPhoto, encodedCopiesFrom, openPhoto, type Photo } from '../../src/vision/photo.ts';
import { photoModelInput, toModelInput } from '../../src/vision/preprocess.ts';
import { recipeFor } from '../../src/vision/recipe.ts';
import { removeBackground } from '../../src/vision/remove-background.ts';
import { heapPlanes, sharedPlanes } from '../../src/vision/shared-planes.ts';
import { defaults } from './cutout.ts';

/** A stand-in whose mask is the red channel of its input. */
const redChannel: Segmenter = {
  predict: async (input) => Float32Array.from({ length: input.length / 3 }, (_, i) => input[i * 3]! / 256),
};

/** `segmenter`, refusing an input whose size is not the side it is run at. */
function sideChecked(segmenter: Segmenter): Segmenter {
  return {
    predict: async (input, side = modelSize) => {
      assert.equal(input.length, side * side * 3, `an input of ${input.length} bytes run at side ${side}`);
      return segmenter.predict(input, side);
    },
  };
}

/** Red rising left to right with a dark disc in the upper left (asymmetric both ways), blue falling top to bottom. */
function pattern(width: number, height: number): Buffer {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0, p = 0; y < height; y++) {
    for (let x = 0; x < width; x++, p += 3) {
      const disc = (x - width / 4) ** 2 + (y - height / 4) ** 2 < (height / 6) ** 2;
      pixels[p] = disc ? 20 : Math.round((235 * x) / (width - 1));
      pixels[p + 1] = 120;
      pixels[p + 2] = Math.round((255 * (height - 1 - y)) / (height - 1));
    }
  }
  return pixels;
}

const large = { width: 2400, height: 1800 };

async function opened(input: Buffer): Promise<Photo> {
  return openPhoto(input, await readHeader(input, defaults.maxPixels), defaults.maxPixels);
}

function meanDifference(a: Uint8Array, b: Uint8Array): number {
  assert.equal(a.length, b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

describe('a large photo', () => {
  it('is still being decoded when its copies are started, while a small one is decoded first', async () => {
    assert.ok(large.width * large.height >= encodedCopiesFrom);
    const png = (width: number, height: number) => sharp(pattern(width, height), { raw: { width, height, channels: 3 } }).png().toBuffer();
    // After every promise already settled has run its callbacks: a decode in progress takes milliseconds more.
    const state = (photo: Photo) => Promise.race([photo.decoded.then(() => 'decoded'), new Promise((resolve) => setImmediate(() => resolve('decoding')))]);
    assert.equal(await state(await opened(await png(large.width, large.height))), 'decoding');
    assert.equal(await state(await opened(await png(640, 480))), 'decoded');
  });

  it('gets the same matte from its encoded bytes as from its decoded pixels (lossless PNG), at either precision', async () => {
    const png = await sharp(pattern(large.width, large.height), { raw: { ...large, channels: 3 } }).png().toBuffer();
    for (const precision of ['standard', 'high'] as const) {
      const recipe = recipeFor('auto', precision, large.width, large.height);
      const fromBytes = await computeMatte(sideChecked(redChannel), await opened(png), recipe);
      const fromPixels = await computeMatte(sideChecked(redChannel), decodedPhoto(await decodeImage(png, defaults.maxPixels)), recipe);
      assert.deepEqual(fromBytes, fromPixels, precision);
    }
  });

  it('makes one copy from its encoded bytes, the model input, and no second one for its guide', async () => {
    const jpeg = await sharp(pattern(large.width, large.height), { raw: { ...large, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
    const photo = await opened(jpeg);
    const copies: Buffer[] = [];
    const watched: Photo = {
      ...photo,
      resize: async (shape) => {
        const copy = await photo.resize(shape);
        copies.push(copy);
        return copy;
      },
    };
    const inputs: Uint8Array[] = [];
    const recording: Segmenter = {
      predict: (input, side) => {
        inputs.push(input);
        return redChannel.predict(input, side);
      },
    };
    await computeMatte(recording, watched, recipeFor('auto', 'standard', large.width, large.height));
    assert.equal(copies.length, 1);
    assert.equal(copies[0]!.length, modelSize * modelSize * 3);
    assert.deepEqual(inputs, [copies[0]]);
  });

  it('makes a model input from its bytes close to the one from its decoded pixels, stretched or padded into the square', async () => {
    // Three times the square's side or more both ways, so that sharp has libjpeg decode the copy at half scale.
    const size = { width: 4096, height: 3072 };
    const jpeg = await sharp(pattern(size.width, size.height), { raw: { ...size, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
    const photo = await opened(jpeg);
    for (const geometry of ['stretch', 'pad'] as const) {
      const fromBytes = await photoModelInput(photo, geometry);
      const fromPixels = await toModelInput(await photo.decoded, geometry);
      assert.deepEqual([fromBytes.content, fromBytes.region], [fromPixels.content, fromPixels.region], geometry);
      // Decoded at half scale for the copy from the bytes: close, not identical.
      const difference = meanDifference(fromBytes.rgb, fromPixels.rgb);
      assert.ok(difference < 0.25, `${geometry}: mean difference ${difference}`);
    }
  });

  /** A copy from the photo as opened and one from its decoded pixels, 640 × 480 as the guide is made. */
  async function copies(input: Buffer): Promise<[Buffer, Buffer]> {
    const photo = await opened(input);
    const shape = (upright: Sharp) => upright.resize(640, 480, { fit: 'fill', kernel: 'linear' });
    return [await photo.resize(shape), await decodedPhoto(await photo.decoded).resize(shape)];
  }

  it('makes an upright copy when it is stored sideways (EXIF orientation 6)', async () => {
    const upright = () => sharp(pattern(large.width, large.height), { raw: { ...large, channels: 3 } });
    const sideways = await upright().rotate(270).jpeg({ quality: 95 }).withMetadata({ orientation: 6 }).toBuffer();
    const photo = await opened(sideways);
    assert.deepEqual([photo.width, photo.height], [large.width, large.height]);
    const [fromBytes, fromPixels] = await copies(sideways);
    const expected = await upright().resize(640, 480, { fit: 'fill', kernel: 'linear' }).raw().toBuffer();
    // Through JPEG, and resized as it is decoded or from the decoded pixels: close, not identical.
    for (const [copy, what] of [[fromBytes, 'from the bytes'], [fromPixels, 'from the pixels']] as const) {
      assert.ok(meanDifference(copy, expected) < 2, `${what}: mean difference ${meanDifference(copy, expected)} from the upright photo`);
    }
  });

  it('makes 8-bit copies of a 16-bit PNG', async () => {
    const png16 = await sharp(pattern(large.width, large.height), { raw: { ...large, channels: 3 } }).toColourspace('rgb16').png().toBuffer();
    const [fromBytes, fromPixels] = await copies(png16);
    assert.equal(fromBytes.length, 640 * 480 * 3);
    // Resized before or after the reduction to 8 bits: the rounding differs.
    assert.ok(meanDifference(fromBytes, fromPixels) < 1, `mean difference ${meanDifference(fromBytes, fromPixels)}`);
  });

  it("is decoded into the task's shared memory, the pixels a decode on this thread gives (3 and 4 channels)", async () => {
    for (const channels of [3, 4] as const) {
      const raw = channels === 3 ? pattern(large.width, large.height) : await sharp(pattern(large.width, large.height), { raw: { ...large, channels: 3 } }).ensureAlpha(0.5).raw().toBuffer();
      const png = await sharp(raw, { raw: { ...large, channels } }).png().toBuffer();
      const planes = sharedPlanes();
      const decoded = await (await openPhoto(png, await readHeader(png, defaults.maxPixels), defaults.maxPixels, planes)).decoded;
      assert.ok(decoded.pixels.buffer instanceof SharedArrayBuffer, `${channels} channels: in shared memory`);
      const here = await decodeImage(png, defaults.maxPixels);
      assert.deepEqual([decoded.width, decoded.height, decoded.channels], [here.width, here.height, channels]);
      assert.ok(decoded.pixels.equals(here.pixels), `${channels} channels: the same pixels`);
      planes.release();
    }
  });

  it('is decoded on this thread, into a buffer of its own, where the set has no room for its rows', async () => {
    const png = await sharp(pattern(large.width, large.height), { raw: { ...large, channels: 3 } }).png().toBuffer();
    const decoded = await (await openPhoto(png, await readHeader(png, defaults.maxPixels), defaults.maxPixels, heapPlanes)).decoded;
    assert.ok(!(decoded.pixels.buffer instanceof SharedArrayBuffer));
    assert.ok(decoded.pixels.equals((await decodeImage(png, defaults.maxPixels)).pixels));
  });

  it('is refused as unsupported_image when truncated, as a small one is', async () => {
    const jpeg = await sharp(pattern(large.width, large.height), { raw: { ...large, channels: 3 } }).jpeg().toBuffer();
    await assert.rejects(removeBackground(redChannel, jpeg.subarray(0, jpeg.length / 2), defaults), (err: unknown) => {
      assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
      assert.equal(err.code, 'unsupported_image');
      return true;
    });
  });
});
