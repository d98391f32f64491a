// The band composer against the plain per-pixel rule: transparent pixels all zero, others the
// photo's colour with the matte's alpha (times the source's own alpha where it has one).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeBand } from '../../src/vision/compose.ts';
import { samplePosition } from '../../src/vision/planes.ts';
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
    it(`keeps the photo's colours where the matte shows them and zeroes them where it hides them, whatever was composed before (${channels} channels)`, () => {
      const width = 57, height = 40, from = 9, to = 31;
      const alpha = alphaPattern(width, height);
      // With four channels every fifth pixel is transparent in the source itself.
      const photo = Uint8Array.from({ length: width * height * channels }, (_, i) => (i % channels !== 3 ? (i * 101 + 7) % 256 : (i >> 2) % 5 === 0 ? 0 : (i * 13) % 256));
      // An opaque band first leaves the composer's own memory full of non-zero pixels.
      const opaqueMatte = { kind: 'bytes', data: new Uint8Array((to - from) * width).fill(255) } as const;
      composeBand({ width, height, channels, from, to, pixels: new Uint8Array((to - from) * width * channels).fill(200), matte: { alpha: opaqueMatte, colours: null }, target: { kind: 'rgba', out: new Uint8Array((to - from) * width * 4) } });
      const out = new Uint8Array((to - from) * width * 4).fill(0xab);
      composeBand({
        width, height, channels, from, to,
        pixels: photo.slice(from * width * channels, to * width * channels),
        matte: { alpha: { kind: 'bytes', data: alpha.slice(from * width, to * width) }, colours: null },
        target: { kind: 'rgba', out },
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

  it('re-solves a partly transparent pixel’s colour from the colour fields interpolated at its place: F + α(I − αF − (1 − α)B)', () => {
    const width = 53, height = 41, from = 6, to = 35, fw = 7, fh = 6;
    const alpha = alphaPattern(width, height);
    const photo = Uint8Array.from({ length: width * height * 3 }, (_, i) => (i * 101 + 7) % 256);
    // Fields that vary along both axes, differently per channel, so a sample taken at the wrong place shows.
    const plane = (f: (x: number, y: number) => number) => Float32Array.from({ length: fw * fh }, (_, i) => f(i % fw, Math.floor(i / fw)));
    const foreground = [0, 1, 2].map((c) => plane((x, y) => (0.1 + 0.12 * x + 0.05 * c + 0.13 * y * y) % 1)) as [Float32Array, Float32Array, Float32Array];
    const background = [0, 1, 2].map((c) => plane((x, y) => (0.9 - 0.1 * x * (c + 1) + 0.07 * y) % 1)) as [Float32Array, Float32Array, Float32Array];
    const out = new Uint8Array((to - from) * width * 4);
    composeBand({
      width, height, channels: 3, from, to,
      pixels: photo.slice(from * width * 3, to * width * 3),
      matte: { alpha: { kind: 'bytes', data: alpha.slice(from * width, to * width) }, colours: { foreground, background, width: fw, height: fh } },
      target: { kind: 'rgba', out },
    });
    const sample = (i: number, size: number, target: number) => {
      const at = samplePosition(i, 0, size / target, size);
      const lo = Math.floor(at);
      return { lo, hi: Math.min(lo + 1, size - 1), t: at - lo };
    };
    const at = (field: Float32Array, x: number, y: number) => {
      const sx = sample(x, fw, width), sy = sample(y, fh, height);
      const row = (r: number) => field[r * fw + sx.lo]! + (field[r * fw + sx.hi]! - field[r * fw + sx.lo]!) * sx.t;
      return 255 * (row(sy.lo) + (row(sy.hi) - row(sy.lo)) * sy.t);
    };
    let partial = 0;
    for (let y = from; y < to; y++) {
      for (let x = 0; x < width; x++) {
        const ours = alpha[y * width + x]!;
        if (ours === 0 || ours === 255) continue;
        partial++;
        const a = ours / 255;
        for (let c = 0; c < 3; c++) {
          const f = at(foreground[c]!, x, y), b = at(background[c]!, x, y);
          const expected = Math.round(Math.min(255, Math.max(0, f + a * (photo[(y * width + x) * 3 + c]! - a * f - (1 - a) * b))));
          const got = out[((y - from) * width + x) * 4 + c]!;
          assert.ok(Math.abs(got - expected) <= 1, `pixel ${x},${y} channel ${c}: ${got}, expected ${expected}`);
        }
      }
    }
    assert.ok(partial > 100, `the band has partly transparent pixels (${partial})`);
  });

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
      const out = new Uint8Array((to - from) * width * 4).fill(chunkBytes & 0xff);
      composeBand({ width, height, channels: 4, from, to, pixels: photo, matte: { alpha: { kind: 'guided', coefficients, curve: alphaCurve(2) }, colours }, target: { kind: 'rgba', out } }, chunkBytes);
      return out;
    };
    const whole = compose(1 << 20);
    assert.deepEqual(compose(1), whole);
    let partial = 0;
    for (let i = 3; i < whole.length; i += 4) if (whole[i]! > 0 && whole[i]! < 255) partial++;
    assert.ok(partial > 50, `the band has partly transparent pixels (${partial})`);
  });
});
