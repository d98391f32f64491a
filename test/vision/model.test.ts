// The model session: loaded from the installed package, once per process, in its own thread.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { modelSize, startSegmenter } from '../../src/vision/model.ts';
import { loadSegmenter, removeBackground } from '../../src/vision/remove-background.ts';
import { collectionKinds } from '../support/collections.ts';
import { fixturePhoto, iou } from '../support/fixtures.ts';
import { defaults } from './cutout.ts';

// Installed before any load in this process: the session must be built in the inference thread only.
const createSession = mock.method(ort.InferenceSession, 'create');

describe('loadSegmenter', () => {
  it('shares one segmenter in the process, however many loads (concurrent or not) and removals', async () => {
    const concurrent = await Promise.all([loadSegmenter({ threads: 2 }), loadSegmenter({ threads: 2 }), loadSegmenter({ threads: 1 })]);
    assert.ok(concurrent.every((segmenter) => segmenter === concurrent[0]));
    const photo = fixturePhoto('horse-279');
    for (let i = 0; i < 2; i++) {
      const result = await removeBackground(await loadSegmenter({ threads: 2 }), photo, defaults);
      assert.equal(result.width, 288);
    }
    assert.equal(await loadSegmenter({ threads: 2 }), concurrent[0]);
    assert.equal(createSession.mock.callCount(), 0, 'no session on the event loop’s thread');
  });

  it('keeps the event loop turning while an inference runs', async () => {
    const segmenter = await loadSegmenter({ threads: 2 });
    let turns = 0;
    let running = true;
    const spin = (): void => {
      turns++;
      if (running) setTimeout(spin, 1);
    };
    spin();
    const mask = await segmenter.predict(new Uint8Array(3 * modelSize * modelSize).fill(128));
    running = false;
    assert.equal(mask.length, modelSize * modelSize);
    // A run takes hundreds of milliseconds; on the event loop's thread it would allow no turn at all.
    assert.ok(turns >= 10, `the event loop turned ${turns} times during an inference`);
  });

  it('answers concurrent predictions each with its own mask, and the caller keeps its input', async () => {
    const segmenter = await loadSegmenter({ threads: 2 });
    const grey = new Uint8Array(3 * modelSize * modelSize).fill(128);
    const bright = new Uint8Array(3 * modelSize * modelSize).fill(243);
    const [a, b] = await Promise.all([segmenter.predict(grey), segmenter.predict(bright)]);
    assert.equal(grey.length, 3 * modelSize * modelSize, 'the input was not transferred away');
    assert.notDeepEqual(a.subarray(0, 1000), b.subarray(0, 1000));
  });

  it('leaves the process marking its garbage in one pause, never in incremental steps', async () => {
    await loadSegmenter({ threads: 2 });
    const { major, incremental, kinds } = await collectionKinds();
    assert.ok(major, `collections of the whole heap happened (kinds ${kinds.join(', ')})`);
    assert.ok(!incremental, `no incremental marking (kinds ${kinds.join(', ')})`);
  });

  it('runs at another side that is a multiple of 64, and refuses one that is not', async () => {
    const segmenter = await loadSegmenter({ threads: 2 });
    const side = modelSize + 128;
    const mask = await segmenter.predict(new Uint8Array(3 * side * side).fill(128), side);
    assert.equal(mask.length, side * side);
    await assert.rejects(segmenter.predict(new Uint8Array(3 * 1000 * 1000), 1000), /cannot take an input side of 1000/);
  });

  it('runs a session of its own on the fp32 graph (the quality benchmark’s baseline), which takes the bytes normalised in its thread, beside the INT8 one, which takes them as they are', async () => {
    const photo = new Uint8Array(await sharp(fixturePhoto('am-gt07')).removeAlpha().resize(modelSize, modelSize, { fit: 'fill' }).raw().toBuffer());
    const [int8, fp32] = await Promise.all([(await loadSegmenter({ threads: 2 })).predict(photo), (await startSegmenter({ threads: 2, graph: 'fp32' })).predict(photo)]);
    const foreground = (mask: Float32Array) => Uint8Array.from(mask, (v) => (v >= 0.5 ? 255 : 0));
    assert.ok(iou(foreground(int8), foreground(fp32)) > 0.97, 'the two graphs find the same subject');
    assert.ok(int8.some((v, i) => v !== fp32[i]), 'the two are different graphs');
  });

  it('refuses input bytes of the wrong size', async () => {
    const segmenter = await loadSegmenter({ threads: 2 });
    await assert.rejects(segmenter.predict(new Uint8Array(10)), /model input must have/);
    await assert.rejects(segmenter.predict(new Uint8Array(3 * modelSize * modelSize), modelSize + 64), /model input must have/);
  });
});
