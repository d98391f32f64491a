// The pipeline's own logic with stand-in segmenters: fast, and exact where the model is not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp, { type Sharp } from 'sharp';
import { TaskError } from '../../src/domain/errors.ts';
import { decodeImage } from '../../src/vision/decode.ts';
import { computeMatte } from '../../src/vision/matte.ts';
import { modelSize, type Segmenter } from '../../src/vision/model.ts';
import { decodedPhoto } from '../../src/vision/photo.ts';
import { highSecondSide, recipeFor, workingSide } from '../../src/vision/recipe.ts';
import { removeBackground } from '../../src/vision/remove-background.ts';
import { decodeCutout, defaults } from './cutout.ts';

/** A stand-in whose mask is the red channel of its input, so it moves with the image when mirrored. */
function redChannelSegmenter(): Segmenter & { calls: number; sides: number[] } {
  return {
    calls: 0,
    sides: [],
    async predict(input, side = modelSize) {
      this.calls++;
      this.sides.push(side);
      assert.equal(input.length, 3 * side * side, 'the input is the square of its side');
      return Float32Array.from({ length: side * side }, (_, i) => input[i * 3]! / 256);
    },
  };
}

/**
 * Red rising from left to right over a black band at the top (asymmetric both ways), green
 * everywhere; with `holeAlpha`, the bottom-right corner is fully transparent.
 */
async function gradientPng(width: number, height: number, { holeAlpha = false } = {}): Promise<Buffer> {
  const channels = holeAlpha ? 4 : 3;
  const pixels = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * channels;
      pixels[p] = y < height / 4 ? 0 : Math.round((255 * x) / (width - 1));
      pixels[p + 1] = 200;
      if (holeAlpha) pixels[p + 3] = x >= (3 * width) / 4 && y >= (3 * height) / 4 ? 0 : 255;
    }
  }
  return sharp(pixels, { raw: { width, height, channels } }).png().toBuffer();
}

describe('removeBackground pipeline', () => {
  it('puts the mask where the pixels are, at the source size', async () => {
    const segmenter = redChannelSegmenter();
    const result = await removeBackground(segmenter, await gradientPng(300, 120), defaults);
    const { alpha, width, height } = await decodeCutout(result.data);
    assert.deepEqual([width, height], [300, 120]);
    assert.equal(segmenter.calls, 1);
    assert.ok(alpha[0]! < 8 && alpha[299]! < 8, 'the black band should be transparent');
    const row = 100 * width;
    assert.ok(alpha[row]! < 16 && alpha[row + 299]! > 240, `alpha should rise left to right: ${alpha[row]} → ${alpha[row + 299]}`);
  });

  it('un-mirrors the mirrored pass, so a mask that follows the pixels is unchanged', async () => {
    const input = await gradientPng(300, 120);
    const segmenter = redChannelSegmenter();
    const high = recipeFor('auto', 'high', 300, 120);
    const single = { ...high, passes: high.passes.filter((pass) => !pass.mirrored) };
    const sameSide = { ...high, passes: high.passes.map((pass) => ({ ...pass, side: modelSize })) };
    const once = await decodeCutout((await removeBackground(segmenter, input, { ...defaults, recipe: single })).data);
    const twice = await decodeCutout((await removeBackground(segmenter, input, { ...defaults, recipe: sameSide })).data);
    assert.equal(segmenter.calls, 3);
    assert.ok(twice.alpha.equals(once.alpha));
  });

  it('runs the mirrored view of high precision on a larger input, whose mask lands where the pixels are', async () => {
    const input = await gradientPng(300, 120);
    const segmenter = redChannelSegmenter();
    const high = recipeFor('auto', 'high', 300, 120);
    const single = { ...high, passes: high.passes.filter((pass) => !pass.mirrored) };
    const once = await decodeCutout((await removeBackground(segmenter, input, { ...defaults, recipe: single })).data);
    const twice = await decodeCutout((await removeBackground(segmenter, input, { ...defaults, precision: 'high' })).data);
    assert.deepEqual(segmenter.sides, [modelSize, modelSize, highSecondSide]);
    let worst = 0;
    for (let i = 0; i < once.alpha.length; i++) worst = Math.max(worst, Math.abs(once.alpha[i]! - twice.alpha[i]!));
    // The same ramp sampled on a finer grid: alpha moves by a level or so after the steep curve, not more.
    assert.ok(worst <= 2, `alpha differs by up to ${worst}`);
  });

  it('combines passes as log-odds: at high precision a sure pass outweighs an unsure one', async () => {
    // The upright pass is unsure (0.6), the mirrored one sure of background (0.1). Averaged
    // probabilities would give 0.35; log-odds give σ((logit 0.6 + logit 0.1) / 2) ≈ 0.290.
    const values = [0.6, 0.1];
    let call = 0;
    const segmenter: Segmenter = { predict: async (_input, side = modelSize) => new Float32Array(side * side).fill(values[call++]!) };
    const { passes } = recipeFor('auto', 'high', 300, 120);
    const recipe = { passes, refine: null, contrast: 1, centre: 0.5, decontaminate: false, workingSide };
    const { alpha } = await computeMatte(segmenter, decodedPhoto(await decodeImage(await gradientPng(300, 120), 1e6)), recipe);
    assert.equal(call, 2);
    assert.equal(alpha.kind, 'bytes', 'without refinement the matte carries its full-size bytes');
    const bytes = alpha.kind === 'bytes' ? alpha.data : new Uint8Array();
    assert.ok(bytes.length > 0 && bytes.every((a) => Math.abs(a - 0.29 * 255) <= 1), `alpha ${bytes[0]}, expected ≈ ${Math.round(0.29 * 255)}`);
  });

  it("refines a large photo at the recipe's working side and a small one at its own size", async () => {
    const sizes = async (width: number, height: number, side: number) => {
      const recipe = { ...recipeFor('auto', 'standard', width, height), workingSide: side };
      const { alpha, colours } = await computeMatte(redChannelSegmenter(), decodedPhoto(await decodeImage(await gradientPng(width, height), 1e7)), recipe);
      assert.equal(alpha.kind, 'guided');
      const { width: w, height: h } = alpha.kind === 'guided' ? alpha.coefficients : { width: 0, height: 0 };
      return { w, h, fields: colours && [colours.width, colours.height] };
    };
    assert.deepEqual(await sizes(1600, 1000, workingSide), { w: 640, h: 400, fields: [320, 200] });
    assert.deepEqual(await sizes(1000, 1600, 768), { w: 480, h: 768, fields: [240, 384] });
    assert.deepEqual(await sizes(300, 120, workingSide), { w: 300, h: 120, fields: [150, 60] });
  });

  // What each EXIF orientation asks a viewer to do, undone step by step: the stored pixels that display upright.
  type Step = (image: Sharp) => Sharp;
  const flop: Step = (image) => image.flop();
  const turn = (angle: number): Step => (image) => image.rotate(angle);
  const stored: Record<number, Step[]> = {
    1: [],
    2: [flop],
    3: [turn(180)],
    4: [(image) => image.flip()],
    5: [turn(90), flop],
    6: [turn(270)],
    7: [turn(270), flop],
    8: [turn(90)],
  };
  it('applies every EXIF orientation (1–8): the cutout is upright and masked like the upright photo', async () => {
    const upright = await gradientPng(300, 120);
    const reference = await decodeCutout((await removeBackground(redChannelSegmenter(), upright, defaults)).data);
    for (const [orientation, steps] of Object.entries(stored)) {
      let turned = upright;
      for (const step of steps) turned = await step(sharp(turned)).png().toBuffer();
      const jpeg = await sharp(turned).jpeg({ quality: 100 }).withMetadata({ orientation: Number(orientation) }).toBuffer();
      const cutout = await decodeCutout((await removeBackground(redChannelSegmenter(), jpeg, defaults)).data);
      assert.deepEqual([cutout.width, cutout.height], [300, 120], `orientation ${orientation}`);
      let difference = 0;
      for (let i = 0; i < cutout.alpha.length; i++) difference += Math.abs(cutout.alpha[i]! - reference.alpha[i]!);
      assert.ok(difference / cutout.alpha.length < 3, `orientation ${orientation}: mean alpha difference ${(difference / cutout.alpha.length).toFixed(1)}`);
    }
  });

  for (const holeAlpha of [false, true]) {
    it(`zeroes the colour under fully transparent pixels (${holeAlpha ? 'source with transparency' : 'opaque source'})`, async () => {
      const result = await removeBackground(redChannelSegmenter(), await gradientPng(300, 120, { holeAlpha }), defaults);
      const { data } = await sharp(result.data).raw().toBuffer({ resolveWithObject: true });
      let hidden = 0;
      for (let p = 0; p < data.length; p += 4) {
        if (data[p + 3] === 0) {
          hidden++;
          assert.deepEqual([...data.subarray(p, p + 3)], [0, 0, 0], `pixel ${p / 4} is transparent but keeps its colour`);
        } else if (data[p + 3] === 255) {
          assert.equal(data[p + 1], 200, `pixel ${p / 4} is opaque but lost its colour`);
        }
      }
      assert.ok(hidden >= 300 * 25, 'expected the black band (and the hole) to be transparent');
    });
  }

  it('reports a model failure as processing_failed without its internal message', async () => {
    const failing: Segmenter = {
      predict: () => Promise.reject(new Error('ORT failure in /opt/secret/model.onnx')),
    };
    await assert.rejects(removeBackground(failing, await gradientPng(32, 32), defaults), (err: unknown) => {
      assert.ok(err instanceof TaskError);
      assert.equal(err.code, 'processing_failed');
      assert.doesNotMatch(err.message, /secret|ORT/);
      return true;
    });
  });
});
