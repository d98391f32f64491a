// The band composer against the plain per-pixel rule: transparent pixels all zero, others the
// photo's colour with the matte's alpha (times the source's own alpha where it has one).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeBand } from '../../src/vision/compose.ts';

/** Alpha rows with runs of clear, opaque and partial pixels of every length, starting and ending anywhere. */
function alphaPattern(width: number, height: number): Uint8Array {
  const alpha = new Uint8Array(width * height);
  for (let i = 0, run = 0, value = 0; i < alpha.length; i++, run--) {
    if (run <= 0) {
      run = 1 + ((i * 7919) % 23);
      value = [0, 255, 0, 255, 90, 255, 1, 254][(i * 31) % 8]!;
    }
    alpha[i] = value;
  }
  return alpha;
}

describe('composing a band of the cutout', () => {
  for (const channels of [3, 4] as const) {
    it(`keeps the photo's colours where the matte shows them and zeroes them where it hides them (${channels} channels)`, () => {
      const width = 57, height = 40, from = 9, to = 31;
      const alpha = alphaPattern(width, height);
      const photo = Uint8Array.from({ length: width * height * channels }, (_, i) => (i % channels === 3 ? (i * 13) % 256 : (i * 101 + 7) % 256));
      const out = new Uint8Array((to - from) * width * 4);
      composeBand({
        width, height, channels, from, to,
        pixels: photo.slice(from * width * channels, to * width * channels),
        matte: { alpha: { kind: 'bytes', data: alpha.slice(from * width, to * width) }, colours: null },
        out,
      });
      let opaque = 0, clear = 0;
      for (let o = 0; o < (to - from) * width; o++) {
        const source = (from * width + o) * channels;
        const ours = alpha[from * width + o]!;
        const expectedAlpha = channels === 4 ? Math.round((ours * photo[source + 3]!) / 255) : ours;
        const expected = expectedAlpha === 0 ? [0, 0, 0, 0] : [photo[source]!, photo[source + 1]!, photo[source + 2]!, expectedAlpha];
        assert.deepEqual([...out.subarray(o * 4, o * 4 + 4)], expected, `pixel ${o}`);
        if (expectedAlpha === 255) opaque++;
        if (expectedAlpha === 0) clear++;
      }
      assert.ok(clear > 100, 'the band has transparent pixels');
      if (channels === 3) assert.ok(opaque > 100, 'the band has opaque pixels');
    });
  }
});
