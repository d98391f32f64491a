// The model session: loaded from the installed package, once per process.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import * as ort from 'onnxruntime-node';
import { loadSegmenter, removeBackground } from '../../src/vision/remove-background.ts';
import { fixturePhoto } from '../support/fixtures.ts';
import { defaults } from './cutout.ts';

// Installed before any load in this process, so it sees every session that gets created.
const createSession = mock.method(ort.InferenceSession, 'create');

describe('loadSegmenter', () => {
  it('creates one session per process, however many loads (concurrent or not) and removals', async () => {
    const concurrent = await Promise.all([loadSegmenter({ threads: 2 }), loadSegmenter({ threads: 2 }), loadSegmenter({ threads: 1 })]);
    assert.ok(concurrent.every((segmenter) => segmenter === concurrent[0]));
    const photo = fixturePhoto('horse-279');
    for (let i = 0; i < 2; i++) {
      const result = await removeBackground(await loadSegmenter({ threads: 2 }), photo, defaults);
      assert.equal(result.width, 288);
    }
    assert.equal(createSession.mock.callCount(), 1);
  });

  it('refuses an input tensor of the wrong size', async () => {
    const segmenter = await loadSegmenter({ threads: 2 });
    await assert.rejects(segmenter.predict(new Float32Array(10)), /model input must have/);
  });
});
