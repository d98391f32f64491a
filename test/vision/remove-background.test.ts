// The pipeline end to end with the real model, scored against the fixtures' ground truth.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import sharp from 'sharp';
import { loadSegmenter, removeBackground, type RemovalResult, type Segmenter } from '../../src/vision/remove-background.ts';
import { fixture, fixturePhoto, groundTruth, iou } from '../support/fixtures.ts';
import { decodeCutout, defaults } from './cutout.ts';

let segmenter: Segmenter;
before(async () => {
  segmenter = await loadSegmenter({ threads: 2 });
});

const standardCutouts = new Map<string, Promise<RemovalResult>>();
/** The standard PNG cutout of a fixture, computed once and shared by the tests that need it. */
function standardCutout(name: string): Promise<RemovalResult> {
  let cutout = standardCutouts.get(name);
  if (!cutout) standardCutouts.set(name, (cutout = removeBackground(segmenter, fixturePhoto(name), defaults)));
  return cutout;
}

describe('removeBackground', () => {
  for (const name of ['davis-car-shadow-00016', 'am-gt07']) {
    it(`cuts out ${name} at the source's size with an alpha that matches the ground truth`, async () => {
      const result = await standardCutout(name);
      const { width, height } = fixture(name);
      assert.equal(result.format, 'png');
      assert.deepEqual([result.width, result.height], [width, height]);
      const cutout = await decodeCutout(result.data);
      assert.deepEqual([cutout.width, cutout.height, cutout.channels], [width, height, 4]);
      const score = iou(cutout.alpha, await groundTruth(name));
      assert.ok(score >= 0.8, `IoU ${score.toFixed(3)} < 0.8`);
    });
  }

  it('reports the time of every stage', async () => {
    const { timings } = await standardCutout('davis-car-shadow-00016');
    assert.deepEqual(Object.keys(timings).sort(), ['compose', 'decode', 'encode', 'foreground', 'inference', 'preprocess', 'refine']);
    for (const ms of Object.values(timings)) assert.ok(Number.isFinite(ms) && ms >= 0);
  });

  it('writes lossless WebP whose alpha is exactly the PNG cutout’s', async () => {
    const name = 'davis-car-shadow-00016';
    const webp = await removeBackground(segmenter, fixturePhoto(name), { ...defaults, format: 'webp' });
    assert.equal(webp.format, 'webp');
    assert.equal((await sharp(webp.data).metadata()).format, 'webp');
    const png = await decodeCutout((await standardCutout(name)).data);
    const decoded = await decodeCutout(webp.data);
    assert.deepEqual([decoded.width, decoded.height, decoded.channels], [png.width, png.height, 4]);
    assert.ok(decoded.alpha.equals(png.alpha), 'WebP alpha differs from the PNG alpha');
  });

  it('applies EXIF orientation: a JPEG stored sideways comes out upright, masked like the upright photo', async () => {
    const photo = fixturePhoto('am-gt07');
    const upright = await sharp(photo).jpeg({ quality: 95 }).toBuffer();
    // Orientation 6 tells viewers to turn the stored pixels 90° clockwise, so store them turned back.
    const sideways = await sharp(photo).rotate(270).jpeg({ quality: 95 }).withMetadata({ orientation: 6 }).toBuffer();
    const stored = await sharp(sideways).metadata();
    const uprightCutout = await removeBackground(segmenter, upright, defaults);
    const sidewaysCutout = await removeBackground(segmenter, sideways, defaults);
    assert.deepEqual([sidewaysCutout.width, sidewaysCutout.height], [stored.height, stored.width]);
    assert.deepEqual([sidewaysCutout.width, sidewaysCutout.height], [uprightCutout.width, uprightCutout.height]);
    const score = iou((await decodeCutout(sidewaysCutout.data)).alpha, (await decodeCutout(uprightCutout.data)).alpha);
    assert.ok(score >= 0.95, `IoU with the upright cutout ${score.toFixed(3)} < 0.95`);
  });

  it('runs a second, mirrored pass at high precision: a different mask, still matching the ground truth', async () => {
    const name = 'am-gt07';
    const high = await removeBackground(segmenter, fixturePhoto(name), { ...defaults, precision: 'high' });
    const standardAlpha = (await decodeCutout((await standardCutout(name)).data)).alpha;
    const highAlpha = (await decodeCutout(high.data)).alpha;
    assert.deepEqual([high.width, high.height], [fixture(name).width, fixture(name).height]);
    assert.ok(!highAlpha.equals(standardAlpha), 'high precision gave the same mask as standard');
    const score = iou(highAlpha, await groundTruth(name));
    assert.ok(score >= 0.8, `IoU ${score.toFixed(3)} < 0.8`);
  });
});

describe('removeBackground, task after task', () => {
  it('gives the same cutout whether a task runs first, after another or beside one: reused working memory keeps nothing of the last task', async () => {
    const [car, toy] = ['davis-car-shadow-00016', 'am-gt07'].map((name) => fixturePhoto(name));
    const first = await removeBackground(segmenter, car!, defaults);
    const other = await removeBackground(segmenter, toy!, defaults);
    const again = await removeBackground(segmenter, car!, defaults);
    assert.ok(again.data.equals(first.data), 'the same photo after another gives the same bytes');
    const [carBeside, toyBeside] = await Promise.all([removeBackground(segmenter, car!, defaults), removeBackground(segmenter, toy!, defaults)]);
    assert.ok(carBeside.data.equals(first.data) && toyBeside.data.equals(other.data), 'two tasks side by side give their own bytes');
  });
});
