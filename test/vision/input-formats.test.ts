// Which inputs the pipeline takes and which it refuses, with the real model.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { baselineCutout, cachingSegmenter } from '../../bench/quality-run.ts';
import { TaskError } from '../../src/domain/errors.ts';
import { decodeImage } from '../../src/vision/decode.ts';
import { loadSegmenter, removeBackground, type Segmenter } from '../../src/vision/remove-background.ts';
import { fixture, fixturePhoto, groundTruth, iou } from '../support/fixtures.ts';
import { heicClaiming } from '../support/heic.ts';
import { decodeCutout, defaults } from './cutout.ts';

const name = 'am-gt02';

let segmenter: Segmenter;
before(async () => {
  segmenter = await loadSegmenter({ threads: 2 });
});

/** Cuts out `input` and checks the result has the fixture's size, 4 channels and an alpha close to its ground truth. */
async function assertCutoutMatchesFixture(input: Buffer): Promise<void> {
  const result = await removeBackground(segmenter, input, defaults);
  const cutout = await decodeCutout(result.data);
  const { width, height } = fixture(name);
  assert.deepEqual([cutout.width, cutout.height, cutout.channels], [width, height, 4]);
  const score = iou(cutout.alpha, await groundTruth(name));
  assert.ok(score >= 0.8, `IoU ${score.toFixed(3)} < 0.8`);
}

function rejectsWith(code: TaskError['code'], message?: RegExp): (err: unknown) => boolean {
  return (err) => {
    assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (message) assert.match(err.message, message);
    return true;
  };
}

function pngChunk(type: string, body: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), body]);
  const framed = Buffer.alloc(typed.length + 8);
  framed.writeUInt32BE(body.length, 0);
  typed.copy(framed, 4);
  framed.writeUInt32BE(zlib.crc32(typed), typed.length + 4);
  return framed;
}

/** A PNG whose header claims a size that its few bytes of pixel data could never fill. */
function pngClaiming(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', header), pngChunk('IDAT', zlib.deflateSync(Buffer.alloc(16))), pngChunk('IEND', Buffer.alloc(0))]);
}

describe('input formats', () => {
  it('takes a CMYK JPEG', async () => {
    const cmyk = await sharp(fixturePhoto(name)).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer();
    assert.equal((await sharp(cmyk).metadata()).space, 'cmyk');
    await assertCutoutMatchesFixture(cmyk);
  });

  it('takes a greyscale JPEG', async () => {
    const grey = await sharp(fixturePhoto(name)).toColourspace('b-w').jpeg({ quality: 95 }).toBuffer();
    assert.equal((await sharp(grey).metadata()).channels, 1);
    await assertCutoutMatchesFixture(grey);
  });

  it('takes a 16-bit PNG', async () => {
    const deep = await sharp(fixturePhoto(name)).toColourspace('rgb16').png().toBuffer();
    assert.equal((await sharp(deep).metadata()).depth, 'ushort');
    await assertCutoutMatchesFixture(deep);
  });

  it('keeps what a PNG already had transparent, and multiplies partial transparency', async () => {
    const { data, info } = await sharp(fixturePhoto(name)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const { width, height } = info;
    // Left third fully transparent, middle third half transparent, right third opaque.
    const third = Math.floor(width / 3);
    const sourceAlpha = (x: number): number => (x < third ? 0 : x < 2 * third ? 128 : 255);
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[(y * width + x) * 4 + 3] = sourceAlpha(x);
    const input = await sharp(data, { raw: { width, height, channels: 4 } }).png().toBuffer();

    const cutout = await decodeCutout((await removeBackground(segmenter, input, defaults)).data);

    assert.deepEqual([cutout.width, cutout.height, cutout.channels], [width, height, 4]);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const alpha = cutout.alpha[y * width + x]!;
        assert.ok(alpha <= sourceAlpha(x), `pixel (${x}, ${y}) has alpha ${alpha} over the source's ${sourceAlpha(x)}`);
      }
    }
    const rightThird = (mask: Buffer): Buffer => Buffer.concat(Array.from({ length: height }, (_, y) => mask.subarray(y * width + 2 * third, (y + 1) * width)));
    const score = iou(rightThird(cutout.alpha), rightThird(await groundTruth(name)));
    assert.ok(score >= 0.8, `IoU in the opaque third ${score.toFixed(3)} < 0.8`);
  });

  it('takes a 16×16 image and returns 16×16', async () => {
    const tiny = await sharp(fixturePhoto(name)).resize(16, 16, { fit: 'fill' }).png().toBuffer();
    const result = await removeBackground(segmenter, tiny, defaults);
    const cutout = await decodeCutout(result.data);
    assert.deepEqual([result.width, result.height, cutout.width, cutout.height, cutout.channels], [16, 16, 16, 16, 4]);
  });

  it('cuts out a 10:1 panorama at its size, at least as well as the plain resized mask', async () => {
    // The fixture in the middle of a wide scene made by repeating its edge columns, the ground truth
    // likewise. The model sees it stretched: padding it to a square instead made the model take the
    // whole strip for the subject (see the README's panorama numbers).
    const { width, height } = fixture(name);
    const side = Math.ceil((10 * height - width) / 2);
    const panorama = await sharp(fixturePhoto(name)).extend({ left: side, right: side, extendWith: 'copy' }).png().toBuffer();
    const truth = await sharp(await groundTruth(name), { raw: { width, height, channels: 1 } })
      .extend({ left: side, right: side, extendWith: 'copy' })
      .extractChannel(0)
      .raw()
      .toBuffer();
    const shared = cachingSegmenter(segmenter);
    const cutout = await decodeCutout((await removeBackground(shared, panorama, defaults)).data);
    assert.deepEqual([cutout.width, cutout.height], [width + 2 * side, height]);
    const baseline = await baselineCutout(shared, await decodeImage(panorama, defaults.maxPixels));
    const baselineAlpha = Buffer.alloc(truth.length);
    for (let i = 0; i < truth.length; i++) baselineAlpha[i] = baseline[i * 4 + 3]!;
    assert.equal(shared.passes, 1);
    const ours = iou(cutout.alpha, truth);
    const plain = iou(baselineAlpha, truth);
    assert.ok(ours >= plain - 0.005, `IoU ${ours.toFixed(3)} below the plain resized mask's ${plain.toFixed(3)}`);
  });

  it('cuts out the first frame of an animated GIF', async () => {
    const first = await sharp(fixturePhoto(name)).resize(200, 131, { fit: 'fill' }).png().toBuffer();
    const second = await sharp({ create: { width: 200, height: 131, channels: 3, background: '#2040ff' } }).png().toBuffer();
    const gif = await sharp([first, second], { join: { animated: true } }).gif().toBuffer();
    assert.equal((await sharp(gif).metadata()).pages, 2);
    const result = await removeBackground(segmenter, gif, defaults);
    const cutout = await decodeCutout(result.data);
    assert.deepEqual([cutout.width, cutout.height, cutout.channels], [200, 131, 4]);
    const truth = await sharp(await groundTruth(name), { raw: { width: fixture(name).width, height: fixture(name).height, channels: 1 } })
      .resize(200, 131, { fit: 'fill' })
      .extractChannel(0)
      .raw()
      .toBuffer();
    const score = iou(cutout.alpha, truth);
    assert.ok(score >= 0.8, `IoU ${score.toFixed(3)} < 0.8: not the first frame's subject`);
  });

  it('refuses SVG as unsupported_image, naming the format', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64"/></svg>');
    await assert.rejects(removeBackground(segmenter, svg, defaults), rejectsWith('unsupported_image', /SVG/));
  });

  it('refuses a HEIC photo (HEVC-coded HEIF, which this build cannot decode) as unsupported_image, saying so', async () => {
    const heic = heicClaiming(640, 480);
    const header = await sharp(heic).metadata();
    assert.deepEqual([header.format, header.compression, header.width, header.height], ['heif', 'hevc', 640, 480]);
    await assert.rejects(removeBackground(segmenter, heic, defaults), rejectsWith('unsupported_image', /^HEIC images \(HEIF coded with HEVC\) are not supported/));
  });

  it('refuses random bytes and empty input as unsupported_image', async () => {
    const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251));
    await assert.rejects(removeBackground(segmenter, noise, defaults), rejectsWith('unsupported_image'));
    await assert.rejects(removeBackground(segmenter, Buffer.alloc(0), defaults), rejectsWith('unsupported_image'));
  });

  it('refuses a truncated image as unsupported_image', async () => {
    const png = await sharp(fixturePhoto(name)).png().toBuffer();
    await assert.rejects(removeBackground(segmenter, png.subarray(0, png.length / 2), defaults), rejectsWith('unsupported_image'));
  });

  it('refuses an image over maxPixels from its header alone, before decoding', async () => {
    // Decoding this file would fail (unsupported_image): the size must come from the header alone.
    await assert.rejects(removeBackground(segmenter, pngClaiming(100_000, 100_000), defaults), rejectsWith('image_too_large', /100000×100000/));
    // One column over a 50 MP limit reads as over it, not rounded down to the limit itself.
    await assert.rejects(
      removeBackground(segmenter, pngClaiming(10_001, 5_000), { ...defaults, maxPixels: 50_000_000 }),
      rejectsWith('image_too_large', /^The image is 10001×5000 \(50,005,000 pixels\); the limit is 50,000,000 pixels\.$/),
    );
    await assert.rejects(removeBackground(segmenter, fixturePhoto(name), { ...defaults, maxPixels: 800 * 523 }), rejectsWith('image_too_large'));
  });

  it('refuses WebP output wider than WebP can store as image_too_large, before decoding', async () => {
    await assert.rejects(removeBackground(segmenter, pngClaiming(20_000, 100), { ...defaults, format: 'webp' }), rejectsWith('image_too_large', /png/));
  });
});
