// The quality benchmark's baseline stands for the peer: it must resample as the peer does, and its
// cutout must come out as the peer's own removeBackground() does on the same photo.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { loadPeer, peerCutout, type PeerRemove } from '../../bench/peer-remove.ts';
import { resizeAsPeer, truncatedMaskBytes } from '../../bench/peer-sampling.ts';
import { alphaDistance } from '../../bench/quality-metrics.ts';
import { baselineCutout } from '../../bench/quality-run.ts';
import { decodeImage } from '../../src/vision/decode.ts';
import { startSegmenter, type Segmenter } from '../../src/vision/model.ts';
import { fixturesDir } from '../support/fixtures.ts';

describe("the peer's resampling", () => {
  it('enlarges with pixel corners lined up: two pixels become four, the last two copies of the second', () => {
    assert.deepEqual([...resizeAsPeer(Uint8Array.from([0, 100]), 2, 1, 1, 4, 1)], [0, 50, 100, 100]);
  });

  it('shrinks by taking the sample at each corner, without averaging the pixels between', () => {
    assert.deepEqual([...resizeAsPeer(Uint8Array.from([10, 20, 30, 40]), 4, 1, 1, 2, 1)], [10, 30]);
  });

  it('resamples rows as it does columns, each channel on its own, rounding to bytes', () => {
    const column = Uint8Array.from([0, 255, 1, 3]); // two pixels of two channels, one above the other
    assert.deepEqual([...resizeAsPeer(column, 1, 2, 2, 1, 4)], [0, 255, 1, 129, 1, 3, 1, 3]);
  });

  it("turns the mask into bytes by truncation, as the peer's Uint8Array does", () => {
    assert.deepEqual([...truncatedMaskBytes(Float32Array.from([0, 0.5, 0.999, 1]))], [0, 127, 254, 255]);
  });
});

describe("the baseline against the peer's own cutout (the real peer and the fp32 graph)", () => {
  let segmenter: Segmenter;
  let peer: PeerRemove;
  before(async () => {
    segmenter = await startSegmenter({ threads: 2, graph: 'fp32' });
    peer = await loadPeer();
  });

  // The photo whose score moved most with the resampling (bench:quality --peer prints all of them;
  // one is enough here, where each photo costs a pass of the peer and two of the fp32 graph).
  it("on davis-libby-00019, the baseline's alpha is within half a level of the peer's on average, and nearer than the centred baseline's", async () => {
    const file = fs.readdirSync(path.join(fixturesDir, 'images')).find((f) => path.parse(f).name === 'davis-libby-00019')!;
    const bytes = fs.readFileSync(path.join(fixturesDir, 'images', file));
    const image = await decodeImage(bytes, 50_000_000);
    const theirs = await peerCutout(peer, bytes, file);
    const asPeer = alphaDistance(theirs, await baselineCutout(segmenter, image, 'peer'));
    const centred = alphaDistance(theirs, await baselineCutout(segmenter, image, 'centred'));
    assert.ok(asPeer < 0.5, `the baseline's alpha is ${asPeer.toFixed(3)} levels from the peer's`);
    assert.ok(asPeer < centred / 2, `baseline ${asPeer.toFixed(3)} vs centred baseline ${centred.toFixed(3)} levels from the peer's`);
  });
});
