// The band composer against the plain per-pixel rule: transparent pixels all zero, others the
// photo's colour with the matte's alpha (times the source's own alpha where it has one).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeBand } from '../../src/vision/compose.ts';
import { bandEnds } from '../../src/vision/cutout-bands.ts';
import { alphaCurve } from '../../src/vision/recipe.ts';

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

  it('gives the same bytes whether a band is composed in one call or a row at a time (guided alpha, colour fields, source alpha)', () => {
    const width = 45, height = 37, from = 5, to = 33, cw = 12, ch = 10, fw = 6, fh = 5;
    const field = (n: number, f: (i: number) => number) => Float32Array.from({ length: n }, (_, i) => f(i));
    const coefficients = {
      a: [field(cw * ch, (i) => Math.sin(i) * 2), field(cw * ch, (i) => Math.cos(i * 0.3)), field(cw * ch, (i) => (i % 7) / 7 - 0.5)] as [Float32Array, Float32Array, Float32Array],
      b: field(cw * ch, (i) => (i % cw < 3 ? 3 : i % cw > 9 ? -3 : 0.4 + Math.sin(i) * 0.3)),
      width: cw,
      height: ch,
    };
    const colours = {
      foreground: [0, 1, 2].map((c) => field(fw * fh, (i) => ((i + c) % 5) / 5)) as [Float32Array, Float32Array, Float32Array],
      background: [0, 1, 2].map((c) => field(fw * fh, (i) => ((i * 3 + c) % 4) / 4)) as [Float32Array, Float32Array, Float32Array],
      width: fw,
      height: fh,
    };
    const photo = Uint8Array.from({ length: (to - from) * width * 4 }, (_, i) => (i * 101 + 7) % 256);
    const compose = (chunkBytes: number) => {
      const out = new Uint8Array((to - from) * width * 4);
      composeBand({ width, height, channels: 4, from, to, pixels: photo, matte: { alpha: { kind: 'guided', coefficients, curve: alphaCurve(2) }, colours }, out }, chunkBytes);
      return out;
    };
    const whole = compose(1 << 20);
    assert.deepEqual(compose(1), whole);
    let partial = 0;
    for (let i = 3; i < whole.length; i += 4) if (whole[i]! > 0 && whole[i]! < 255) partial++;
    assert.ok(partial > 50, `the band has partly transparent pixels (${partial})`);
  });

  it('writes PNG scanlines (a zero filter byte, then the RGBA row) and returns their Adler-32, in chunks or whole', () => {
    const width = 301, height = 50, from = 3, to = 47;
    const alpha = alphaPattern(width, height);
    const photo = Uint8Array.from({ length: (to - from) * width * 3 }, (_, i) => (i * 101 + 7) % 256);
    const band = (scanlines: boolean) => ({
      width, height, channels: 3 as const, from, to, pixels: photo,
      matte: { alpha: { kind: 'bytes' as const, data: alpha.slice(from * width, to * width) }, colours: null },
      out: new Uint8Array((to - from) * (width * 4 + (scanlines ? 1 : 0))),
      scanlines,
    });
    const plain = band(false);
    assert.equal(composeBand(plain), null);
    for (const chunkBytes of [1, 5000, 1 << 20]) {
      const lines = band(true);
      const adler = composeBand(lines, chunkBytes);
      for (let r = 0; r < to - from; r++) {
        assert.equal(lines.out[r * (width * 4 + 1)], 0, `filter byte of row ${r}`);
        assert.deepEqual(lines.out.subarray(r * (width * 4 + 1) + 1, (r + 1) * (width * 4 + 1)), plain.out.subarray(r * width * 4, (r + 1) * width * 4), `row ${r}`);
      }
      let a = 1, b = 0;
      for (const v of lines.out) {
        a = (a + v) % 65521;
        b = (b + a) % 65521;
      }
      assert.equal(adler, ((b << 16) | a) >>> 0, `Adler-32 with chunks of ${chunkBytes} bytes`);
    }
  });

  it('splits the rows between threads by cost: a subject filling the lower half gives the upper band more rows', () => {
    const coverage = Float32Array.from({ length: 100 }, (_, y) => (y >= 50 ? 1 : 0));
    const [upper, whole] = bandEnds(1000, coverage, 2);
    assert.equal(whole, 1000);
    // Costs 0.25 per cleared row and 1.25 per covered one: 125 + 625 in all, half of it by row 700.
    assert.equal(upper, 700);
    assert.deepEqual(bandEnds(1000, new Float32Array(100).fill(0.5), 2), [500, 1000]);
    // However lopsided the costs, every band keeps at least 64 rows.
    assert.deepEqual(bandEnds(200, Float32Array.from({ length: 10 }, (_, y) => (y === 0 ? 1000 : 0)), 3), [64, 128, 200]);
  });
});
