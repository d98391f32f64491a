// Edge-aware refinement on synthetic images whose true edge is known exactly.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeBand } from '../../src/vision/compose.ts';
import { guidedMatte, type GuidedCoefficients, type GuidePlanes } from '../../src/vision/guided-filter.ts';
import { alphaCurve } from '../../src/vision/recipe.ts';
import { axisSamples } from '../../src/vision/planes.ts';

/** The whole full-size alpha of a 3-channel photo, as the pipeline's compose kernel makes it. */
function applyAtFullSize(c: GuidedCoefficients, pixels: Uint8Array, width: number, height: number, curve: Uint8Array): Uint8Array {
  const out = new Uint8Array(width * height * 4);
  composeBand({ width, height, channels: 3, from: 0, to: height, pixels, matte: { alpha: { kind: 'guided', coefficients: c, curve }, colours: null }, target: { kind: 'rgba', out } });
  return Uint8Array.from({ length: width * height }, (_, i) => out[i * 4 + 3]!);
}

/** A dark-green left part and a light-orange right part meeting in a sharp vertical edge at `edge` (full-size pixels). */
function photo(width: number, height: number, edge: number): Uint8Array {
  const pixels = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 3;
      pixels.set(x < edge ? [30, 90, 40] : [230, 170, 120], p);
    }
  }
  return pixels;
}

/** The photo scaled down to width × height by area averaging, as colour planes in [0, 1]. */
function shrink(pixels: Uint8Array, fullWidth: number, fullHeight: number, width: number, height: number): GuidePlanes {
  const planes: GuidePlanes = [new Float32Array(width * height), new Float32Array(width * height), new Float32Array(width * height)];
  const fx = fullWidth / width;
  const fy = fullHeight / height;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 3; c++) {
        let sum = 0;
        for (let dy = 0; dy < fy; dy++) for (let dx = 0; dx < fx; dx++) sum += pixels[((y * fy + dy) * fullWidth + x * fx + dx) * 3 + c]!;
        planes[c]![y * width + x] = sum / (fx * fy * 255);
      }
    }
  }
  return planes;
}

/** A mask that rises smoothly over ±`spread` working pixels around `centre`: sharp at the working size, blurry once upsampled. */
function blurryMask(width: number, height: number, centre: number, spread: number): Float32Array {
  const mask = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) mask[y * width + x] = Math.min(1, Math.max(0, (x - centre) / (2 * spread) + 0.5));
  }
  return mask;
}

describe('guided refinement', () => {
  it('snaps a mask that is blurry at full size to the sharp edge of the full-size photo', async () => {
    const full = { width: 1600, height: 64 };
    const work = { width: 400, height: 16 };
    const edge = 803; // not on a working-pixel boundary: only the full-size photo says where it is
    const pixels = photo(full.width, full.height, edge);
    const guide = shrink(pixels, full.width, full.height, work.width, work.height);
    const mask = blurryMask(work.width, work.height, edge / 4 - 0.5, 1);
    const { coefficients } = await guidedMatte(guide, mask, work.width, work.height, { radius: 4, epsilon: 1e-3, curve: alphaCurve(1) });
    const alpha = applyAtFullSize(coefficients, pixels, full.width, full.height, alphaCurve(1));

    // The same blurry mask upsampled without a guide, as the baseline does.
    let refinedError = 0;
    let plainError = 0;
    let refinedPartial = 0;
    let plainPartial = 0;
    for (let x = 0; x < full.width; x++) {
      const truth = x < edge ? 0 : 255;
      const plain = 255 * Math.min(1, Math.max(0, ((x + 0.5) / 4 - 0.5 - (edge / 4 - 0.5)) / 2 + 0.5));
      for (let y = 0; y < full.height; y++) refinedError += Math.abs(alpha[y * full.width + x]! - truth);
      plainError += Math.abs(plain - truth) * full.height;
      if (plain > 32 && plain < 223) plainPartial++;
      const refined = alpha[32 * full.width + x]!;
      if (refined > 32 && refined < 223) refinedPartial++;
    }
    assert.ok(refinedError < plainError / 2, `refined error ${refinedError} is not under half the plain error ${plainError}`);
    assert.equal(refinedPartial, 0, 'the refined edge has partly transparent pixels');
    assert.ok(plainPartial >= 3, `the plain upsampled edge should be blurry (${plainPartial} partial pixels)`);
    const row = 32 * full.width;
    assert.ok(alpha[row + edge - 1]! < 20 && alpha[row + edge]! > 235, `the edge is not sharp: ${alpha[row + edge - 1]} → ${alpha[row + edge]}`);
  });

  it('leaves a flat region flat: no colour texture leaks into an opaque mask', async () => {
    const width = 64, height = 64;
    const pixels = new Uint8Array(width * height * 3);
    for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 37) % 256; // busy texture
    const guide = shrink(pixels, width, height, width, height);
    const { coefficients } = await guidedMatte(guide, new Float32Array(width * height).fill(1), width, height, { radius: 4, epsilon: 1e-3, curve: alphaCurve(1) });
    const alpha = applyAtFullSize(coefficients, pixels, width, height, alphaCurve(1));
    assert.ok(alpha.every((a) => a === 255));
  });
});

describe('full-size alpha', () => {
  it('matches the plain per-pixel formula everywhere, settled regions (all opaque or all clear) included', () => {
    const cw = 40, ch = 30, width = 157, height = 113;
    // Coefficients with wide settled areas (b far above 1 or below 0), colour-driven areas and noise.
    const field = (f: (x: number, y: number) => number) => Float32Array.from({ length: cw * ch }, (_, i) => f(i % cw, Math.floor(i / cw)));
    const c = {
      a: [field((x, y) => Math.sin(x * 0.7 + y) * 2), field((x) => Math.cos(x * 0.3) * 1.5), field((x, y) => ((x * y) % 7) / 7 - 0.5)] as GuidePlanes,
      b: field((x, y) => (x < 12 ? 3 : x > 28 ? -3 : 0.5 + Math.sin(y) * 0.4)),
      width: cw,
      height: ch,
    };
    const pixels = Uint8Array.from({ length: width * height * 3 }, (_, i) => (i * 37) % 256);
    const curve = alphaCurve(2);
    const ours = applyAtFullSize(c, pixels, width, height, curve);
    const xs = axisSamples(width, 0, cw, cw), ys = axisSamples(height, 0, ch, ch);
    const at = (plane: Float32Array, x: number, y: number) => {
      const top = plane[ys.lo[y]! * cw + xs.lo[x]!]! * (1 - xs.t[x]!) + plane[ys.lo[y]! * cw + xs.hi[x]!]! * xs.t[x]!;
      const bottom = plane[ys.hi[y]! * cw + xs.lo[x]!]! * (1 - xs.t[x]!) + plane[ys.hi[y]! * cw + xs.hi[x]!]! * xs.t[x]!;
      return top * (1 - ys.t[y]!) + bottom * ys.t[y]!;
    };
    let settled = 0;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const p = (y * width + x) * 3;
        const q = (at(c.a[0], x, y) * pixels[p]! + at(c.a[1], x, y) * pixels[p + 1]! + at(c.a[2], x, y) * pixels[p + 2]!) / 255 + at(c.b, x, y);
        const expected = curve[Math.min(1024, Math.max(0, Math.round(q * 1024)))]!;
        const got = ours[y * width + x]!;
        if (expected === 0 || expected === 255) settled++;
        assert.ok(Math.abs(got - expected) <= 1, `pixel ${x},${y}: ${got} vs ${expected}`);
        if (expected === 0 || expected === 255) assert.ok(got === expected || Math.abs(q * 1024 - Math.round(q * 1024)) > 0.49, `pixel ${x},${y} is ${got}, expected ${expected}`);
      }
    }
    assert.ok(settled > width * height * 0.5, 'most of the test image is settled');
  });

  it('fills a region as opaque or clear without arithmetic only where every colour would give that byte', () => {
    // Blocks of 4 × 4 working cells share coefficients whose extreme over the colour cube lies a
    // little inside or outside the curve's opaque (or clear) end; the photo's pixels cycle through
    // the cube's eight corners, so each block has pixels at its extreme.
    const block = 4, blocks = 7, cw = block * blocks, ch = block * 2, width = 3 * cw, height = 3 * ch;
    const curve = alphaCurve(2);
    const firstFull = curve.indexOf(255), lastClear = curve.lastIndexOf(0);
    const offsets = [-3e-3, -3e-4, -6e-5, 0, 6e-5, 3e-4, 3e-3];
    const a = [0.7, -0.4, 0.25];
    const negative = a.reduce((s, v) => s + Math.min(v, 0), 0), positive = a.reduce((s, v) => s + Math.max(v, 0), 0);
    // Row of blocks 0: the darkest colour's q around the opaque end; row 1: the brightest's around the clear end.
    const bFor = (bx: number, by: number) => (by === 0 ? (firstFull - 0.5) / 1024 - negative + offsets[bx]! : (lastClear + 0.5) / 1024 - positive - offsets[bx]!);
    const field = (f: (bx: number, by: number) => number) => Float32Array.from({ length: cw * ch }, (_, i) => f(Math.floor((i % cw) / block), Math.floor(Math.floor(i / cw) / block)));
    const c = { a: a.map((v) => field(() => v)) as GuidePlanes, b: field(bFor), width: cw, height: ch };
    const pixels = Uint8Array.from({ length: width * height * 3 }, (_, i) => ((Math.floor(i / 3) >> (i % 3)) & 1 ? 255 : 0));
    const ours = applyAtFullSize(c, pixels, width, height, curve);
    const xs = axisSamples(width, 0, cw, cw), ys = axisSamples(height, 0, ch, ch);
    const bAt = (x: number, y: number) => {
      const row = (r: number) => c.b[r * cw + xs.lo[x]!]! * (1 - xs.t[x]!) + c.b[r * cw + xs.hi[x]!]! * xs.t[x]!;
      return row(ys.lo[y]!) * (1 - ys.t[y]!) + row(ys.hi[y]!) * ys.t[y]!;
    };
    let checked = 0;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const p = (y * width + x) * 3;
        const q = (a[0]! * pixels[p]! + a[1]! * pixels[p + 1]! + a[2]! * pixels[p + 2]!) / 255 + bAt(x, y);
        const k = q * 1024;
        // Away from a rounding tie of the curve's index, the byte is the formula's.
        if (Math.abs(k - Math.floor(k) - 0.5) < 1e-3) continue;
        assert.equal(ours[y * width + x], curve[Math.min(1024, Math.max(0, Math.round(k)))], `pixel ${x},${y} (q·1024 = ${k.toFixed(4)})`);
        checked++;
      }
    }
    assert.ok(checked > width * height * 0.9, `${checked} pixels checked`);
  });
});
