// Which inputs the pipeline takes and which it refuses, with the real model.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { baselineCutout, cachingSegmenter } from '../../bench/quality-run.ts';
import { TaskError } from '../../src/domain/errors.ts';
import { decodeImage, maxSide, readHeader } from '../../src/vision/decode.ts';
import { downscaleToPixels } from '../../src/vision/downscale.ts';
import { encodedCopiesFrom, openPhoto } from '../../src/vision/photo.ts';
import { loadSegmenter, removeBackground, type Segmenter } from '../../src/vision/remove-background.ts';
import { fixture, fixturePhoto, groundTruth, iou } from '../support/fixtures.ts';
import { heicClaiming } from '../support/heic.ts';
import { tiffOf, type TiffSamples } from '../support/tiff.ts';
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

/** A small copy of the fixture as samples 0–255: grey when `channels` is 1 or 2, alpha rising left to right when 2 or 4. */
async function original(channels: TiffSamples['channels']): Promise<Pick<TiffSamples, 'width' | 'height' | 'channels'> & { samples: number[] }> {
  const [width, height] = [48, 32];
  const colours = channels <= 2 ? 1 : 3;
  const photo = sharp(fixturePhoto(name)).resize(width, height, { fit: 'fill' });
  const colour = await (colours === 1 ? photo.toColourspace('b-w') : photo).raw().toBuffer();
  const samples = Array.from({ length: width * height * channels }, (_, i) => {
    const [pixel, band] = [Math.floor(i / channels), i % channels];
    return band < colours ? colour[pixel * colours + band]! : Math.round(((pixel % width) * 255) / (width - 1));
  });
  return { width, height, channels, samples };
}

/** What the pipeline decodes `tiff` to. */
async function decodedTiff(tiff: Buffer): Promise<Buffer> {
  const photo = await openPhoto(tiff, await readHeader(tiff, defaults.maxPixels), defaults.maxPixels);
  return (await photo.decoded).pixels;
}

async function assertDecodesLike(tiff: Buffer, eightBit: Buffer, levels: number): Promise<void> {
  const [ours, theirs] = [await decodedTiff(tiff), await decodedTiff(eightBit)];
  assert.equal(ours.length, theirs.length);
  const worst = Math.max(...ours.map((value, i) => Math.abs(value - theirs[i]!)));
  assert.ok(worst <= levels, `a sample is ${worst} levels off its 8-bit original`);
}

/** The ICC profile sharp embeds for `name`. */
async function profile(name: 'p3' | 'srgb'): Promise<Buffer> {
  return (await sharp(await sharp({ create: { width: 1, height: 1, channels: 3, background: '#808080' } }).withIccProfile(name).png().toBuffer()).metadata()).icc!;
}

const linearLight = (v: number): number => (v <= 10 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);

describe('TIFF sample formats', () => {
  const layouts = [
    [1, 'greyscale'],
    [2, 'greyscale with alpha'],
    [3, 'RGB'],
    [4, 'RGB with alpha'],
  ] as const;

  for (const [channels, layout] of layouts) {
    it(`decodes a ${layout} TIFF with 32-bit unsigned samples to the colours of its 8-bit original`, async () => {
      const source = await original(channels);
      const deep = tiffOf({ ...source, bits: 32, format: 'uint', samples: source.samples.map((v) => v * 0x01010101) });
      await assertDecodesLike(deep, tiffOf({ ...source, bits: 8, format: 'uint' }), 0);
    });

    it(`decodes a ${layout} float TIFF holding 0–1 like its 8-bit original`, async () => {
      const source = await original(channels);
      // RGB floats are linear light, as libvips (and 32-bit editors) read them; greyscale ones as they are.
      const colours = channels <= 2 ? 1 : 3;
      const samples = source.samples.map((v, i) => (colours === 3 && i % channels < 3 ? linearLight(v) : v / 255));
      await assertDecodesLike(tiffOf({ ...source, bits: 32, format: 'float', samples }), tiffOf({ ...source, bits: 8, format: 'uint' }), 1);
    });
  }

  it('makes the copies of a large 32-bit TIFF (its model input, its guide), resized from its bytes, with the colours of its 8-bit original', async () => {
    const [width, height] = [2048, 2048];
    assert.ok(width * height >= encodedCopiesFrom);
    const grey = await sharp(fixturePhoto(name)).resize(width, height, { fit: 'fill' }).toColourspace('b-w').raw().toBuffer();
    const guide = async (tiff: Buffer): Promise<Buffer> =>
      (await openPhoto(tiff, await readHeader(tiff, defaults.maxPixels), defaults.maxPixels)).resize((photo) => photo.resize(64, 64));
    const deep = await guide(tiffOf({ width, height, channels: 1, bits: 32, format: 'uint', samples: Uint32Array.from(grey, (v) => v * 0x01010101) }));
    const eightBit = await guide(tiffOf({ width, height, channels: 1, bits: 8, format: 'uint', samples: grey }));
    assert.ok(deep.every((value, i) => Math.abs(value - eightBit[i]!) <= 1), 'the copy is off its 8-bit original');
  });

  for (const [channels, layout] of [[3, 'RGB'], [4, 'RGB with alpha']] as const) {
    it(`applies the Display P3 or sRGB profile of a 16-bit ${layout} TIFF as its 8-bit original's, instead of reading P3 values as sRGB`, async () => {
      const source = await original(channels);
      for (const icc of [await profile('p3'), await profile('srgb')]) {
        const sixteen = tiffOf({ ...source, bits: 16, format: 'uint', samples: source.samples.map((v) => v * 257), icc });
        await assertDecodesLike(sixteen, tiffOf({ ...source, bits: 8, format: 'uint', icc }), 1);
      }
    });
  }

  it('makes the copies and the preview of a large 16-bit TIFF with a Display P3 profile in the colours of its 8-bit original', async () => {
    const [width, height] = [2048, 2048];
    assert.ok(width * height >= encodedCopiesFrom);
    const rgb = await sharp(fixturePhoto(name)).resize(width, height, { fit: 'fill' }).raw().toBuffer();
    const icc = await profile('p3');
    const sixteen = tiffOf({ width, height, channels: 3, bits: 16, format: 'uint', samples: Uint16Array.from(rgb, (v) => v * 257), icc });
    const eightBit = tiffOf({ width, height, channels: 3, bits: 8, format: 'uint', samples: rgb, icc });
    const guide = async (tiff: Buffer): Promise<Buffer> =>
      (await openPhoto(tiff, await readHeader(tiff, defaults.maxPixels), defaults.maxPixels)).resize((photo) => photo.resize(64, 64));
    const preview = async (tiff: Buffer): Promise<Buffer> => (await decodedTiff(await downscaleToPixels(tiff, 64 * 64, defaults.maxPixels)));
    for (const copy of [guide, preview]) {
      const [ours, theirs] = [await copy(sixteen), await copy(eightBit)];
      assert.equal(ours.length, theirs.length);
      const worst = Math.max(...ours.map((value, i) => Math.abs(value - theirs[i]!)));
      assert.ok(worst <= 2, `the ${copy === guide ? 'guide' : 'preview'} is ${worst} levels off its 8-bit original`);
    }
  });

  it('applies an ICC profile carried by a TIFF with 32-bit unsigned or float samples as its 8-bit original would', async () => {
    const source = await original(3);
    const p3 = await profile('p3');
    const integers = tiffOf({ ...source, bits: 32, format: 'uint', samples: source.samples.map((v) => v * 0x01010101), icc: p3 });
    await assertDecodesLike(integers, tiffOf({ ...source, bits: 8, format: 'uint', icc: p3 }), 1);
    const srgb = await profile('srgb');
    const floats = tiffOf({ ...source, bits: 32, format: 'float', samples: source.samples.map(linearLight), icc: srgb });
    await assertDecodesLike(floats, tiffOf({ ...source, bits: 8, format: 'uint', icc: srgb }), 1);
  });

  it('clamps float samples beyond 0–1 to black and white', async () => {
    const grey = tiffOf({ width: 4, height: 1, channels: 1, bits: 32, format: 'float', samples: [-0.5, 0, 1, 3.5] });
    assert.deepEqual([...(await decodedTiff(grey))], [0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255]);
  });

  it('decodes a CIELAB TIFF with 16-bit or float samples to the colours of its 8-bit original, as libvips reads it', async () => {
    // libvips reads 16-bit CIELAB as signed LabS and float CIELAB as Lab: samples whose meaning it knows.
    const source = await original(3);
    const rgb = tiffOf({ ...source, bits: 8, format: 'uint' });
    const lab = [...new Float32Array((await sharp(rgb).toColourspace('lab').raw({ depth: 'float' }).toBuffer()).buffer)];
    await assertDecodesLike(tiffOf({ ...source, bits: 32, format: 'float', samples: lab, cielab: true }), rgb, 1);
    const labs = lab.map((v, i) => (i % 3 === 0 ? Math.round((v * 65535) / 100) : Math.round(v * 256) & 0xffff));
    await assertDecodesLike(tiffOf({ ...source, bits: 16, format: 'uint', samples: labs, cielab: true }), rgb, 1);
  });

  it('refuses TIFFs with signed integer samples as unsupported_image, naming the sample format', async () => {
    const source = await original(3);
    for (const bits of [8, 16, 32] as const) {
      const signed = tiffOf({ ...source, bits, format: 'int', samples: source.samples.map((v) => Math.floor((v * (2 ** bits - 1)) / 510)) });
      await assert.rejects(removeBackground(segmenter, signed, defaults), rejectsWith('unsupported_image', new RegExp(`^TIFF images with ${bits}-bit signed integer samples are not supported`)));
    }
  });
});

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
    // The centred baseline, the stronger of the two (quality-run.ts), on the same model pass.
    const baseline = await baselineCutout(shared, await decodeImage(panorama, defaults.maxPixels), 'centred');
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

  it('refuses a side longer than 65,535 pixels as image_too_large from the header, within the pixel cap', async () => {
    await assert.rejects(
      removeBackground(segmenter, pngClaiming(10_000_000, 5), { ...defaults, maxPixels: 50_000_000 }),
      rejectsWith('image_too_large', /^The image is 10000000×5; a side can be at most 65,535 pixels\.$/),
    );
    await assert.rejects(removeBackground(segmenter, pngClaiming(3, 65_536), { ...defaults, maxPixels: 50_000_000 }), rejectsWith('image_too_large', /65536/));
    const longest = await sharp({ create: { width: maxSide, height: 2, channels: 3, background: '#4a7' } }).png().toBuffer();
    const cutout = await removeBackground(segmenter, longest, { ...defaults, maxPixels: 50_000_000 });
    assert.deepEqual([cutout.width, cutout.height], [maxSide, 2]);
  });

  it('refuses WebP output wider than WebP can store as image_too_large, before decoding', async () => {
    await assert.rejects(removeBackground(segmenter, pngClaiming(20_000, 100), { ...defaults, format: 'webp' }), rejectsWith('image_too_large', /png/));
  });
});
