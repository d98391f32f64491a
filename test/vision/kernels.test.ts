// The WebAssembly kernels against the textbook formulas written plainly in JavaScript, and their
// runs in the band threads against runs on the calling thread.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { fieldsInThreads, guidedInThreads, stretchInThread } from '../../src/vision/cutout-bands.ts';
import { colourFields, fieldsHere } from '../../src/vision/foreground.ts';
import { guidedMatte, solveHere, type GuidePlanes } from '../../src/vision/guided-filter.ts';
import { alphaCurve } from '../../src/vision/recipe.ts';
import { axisSamples, boxMean, resample } from '../../src/vision/planes.ts';
import { stretchRgbInto, unpackRgbWith } from '../../src/vision/kernels.ts';
import { sharedPlanes } from '../../src/vision/shared-planes.ts';

/** Mean over the clipped (2r+1)² window, pixel by pixel. */
function plainBoxMean(plane: Float32Array, width: number, height: number, radius: number): Float64Array {
  const out = new Float64Array(plane.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0, count = 0;
      for (let v = Math.max(0, y - radius); v <= Math.min(height - 1, y + radius); v++) {
        for (let u = Math.max(0, x - radius); u <= Math.min(width - 1, x + radius); u++, count++) sum += plane[v * width + u]!;
      }
      out[y * width + x] = sum / count;
    }
  }
  return out;
}

/** A smooth-plus-speckle test plane in [0, 1]. */
function testPlane(width: number, height: number, seed: number): Float32Array {
  return Float32Array.from({ length: width * height }, (_, i) => 0.5 + 0.3 * Math.sin(i * 0.37 + seed) + 0.2 * (((i * 7919 + seed * 104729) % 101) / 100 - 0.5));
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance: number, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i]! - expected[i]!) <= tolerance, `${what} at ${i}: ${actual[i]} vs ${expected[i]}`);
  }
}

describe('box means', () => {
  it('are the plain mean over each clipped window, for radii from 0 to wider than the plane', () => {
    for (const [width, height] of [[37, 23], [6, 41], [1, 1], [130, 3]] as const) {
      const plane = testPlane(width, height, 1);
      for (const radius of [0, 1, 3, 8, 9, 10, 50]) assertClose(boxMean(plane, width, height, radius), plainBoxMean(plane, width, height, radius), 1e-5, `${width}×${height} r=${radius}`);
    }
  });
});

describe('bilinear resampling', () => {
  it('is the plain formula on the sampled rectangle, to the last bit, shrinking and enlarging', () => {
    const width = 57, height = 43;
    const plane = testPlane(width, height, 9);
    for (const [rect, outWidth, outHeight] of [
      [{ left: 0, top: 0, width, height }, 29, 22],
      [{ left: 0, top: 0, width, height }, 120, 91],
      [{ left: 5, top: 7, width: 31, height: 20 }, 64, 17],
    ] as const) {
      const xs = axisSamples(outWidth, rect.left, rect.width, width), ys = axisSamples(outHeight, rect.top, rect.height, height);
      const expected = new Float32Array(outWidth * outHeight);
      for (let y = 0; y < outHeight; y++) {
        for (let x = 0; x < outWidth; x++) {
          const at = (row: number, col: number) => plane[row * width + col]!;
          const top = at(ys.lo[y]!, xs.lo[x]!) + (at(ys.lo[y]!, xs.hi[x]!) - at(ys.lo[y]!, xs.lo[x]!)) * xs.t[x]!;
          const bottom = at(ys.hi[y]!, xs.lo[x]!) + (at(ys.hi[y]!, xs.hi[x]!) - at(ys.hi[y]!, xs.lo[x]!)) * xs.t[x]!;
          expected[y * outWidth + x] = top + (bottom - top) * ys.t[y]!;
        }
      }
      assert.deepEqual(resample({ data: plane, width, height }, rect, outWidth, outHeight), expected, `${outWidth}×${outHeight} from ${JSON.stringify(rect)}`);
    }
  });
});

describe('unpacking RGB bytes', () => {
  it('gives one plane per channel, each byte through the table', () => {
    const rgb = Uint8Array.from({ length: 3 * 1001 }, (_, i) => (i * 97 + (i % 3) * 31) % 256);
    const table = Float32Array.from({ length: 256 }, (_, byte) => byte / 255);
    const planes = unpackRgbWith(rgb, table);
    planes.forEach((plane, c) => assert.deepEqual(plane, Float32Array.from({ length: 1001 }, (_, i) => rgb[3 * i + c]! / 255), `channel ${c}`));
  });
});

describe('guided filter coefficients', () => {
  it('are He et al.’s colour guided filter: window covariances plus ε·I solved per pixel, then averaged', async () => {
    const width = 41, height = 29, radius = 3, epsilon = 1e-3;
    const guide: GuidePlanes = [testPlane(width, height, 1), testPlane(width, height, 2), testPlane(width, height, 3)];
    const mask = testPlane(width, height, 4);
    const mean = (p: Float32Array) => plainBoxMean(p, width, height, radius);
    const times = (x: Float32Array, y: Float32Array) => x.map((v, i) => v * y[i]!);
    const [mr, mg, mb, mp] = [...guide, mask].map(mean) as [Float64Array, Float64Array, Float64Array, Float64Array];
    const [rr, rg, rb, gg, gb, bb] = [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]].map(([i, j]) => mean(times(guide[i!]!, guide[j!]!)));
    const [rp, gp, bp] = guide.map((c) => mean(times(c, mask)));
    const n = width * height;
    const raw = [new Float32Array(n), new Float32Array(n), new Float32Array(n), new Float32Array(n)];
    for (let i = 0; i < n; i++) {
      const m = [mr[i]!, mg[i]!, mb[i]!];
      const sigma = [
        [rr![i]! - m[0]! * m[0]! + epsilon, rg![i]! - m[0]! * m[1]!, rb![i]! - m[0]! * m[2]!],
        [rg![i]! - m[0]! * m[1]!, gg![i]! - m[1]! * m[1]! + epsilon, gb![i]! - m[1]! * m[2]!],
        [rb![i]! - m[0]! * m[2]!, gb![i]! - m[1]! * m[2]!, bb![i]! - m[2]! * m[2]! + epsilon],
      ];
      const cov = [rp![i]! - m[0]! * mp[i]!, gp![i]! - m[1]! * mp[i]!, bp![i]! - m[2]! * mp[i]!];
      const a = solve3(sigma, cov);
      a.forEach((v, c) => (raw[c]![i] = v));
      raw[3]![i] = mp[i]! - a[0]! * m[0]! - a[1]! * m[1]! - a[2]! * m[2]!;
    }
    const expected = raw.map(mean);
    const curve = alphaCurve(3, 0.45);
    const { coefficients: c, alpha } = await guidedMatte(guide, mask, width, height, { radius, epsilon, curve });
    [...c.a, c.b].forEach((plane, k) => assertClose(plane, expected[k]!, 1e-3, `coefficient ${k}`));
    // The working-size alpha: q = a·I + b from the coefficients returned, clamped, through the curve.
    const q = (i: number) => Math.min(1, Math.max(0, c.a[0][i]! * guide[0][i]! + c.a[1][i]! * guide[1][i]! + c.a[2][i]! * guide[2][i]! + c.b[i]!));
    assertClose(alpha, Array.from({ length: n }, (_, i) => curve[Math.round(Math.fround(q(i)) * 1024)]! / 255), 1e-6, 'working alpha');
    assert.ok(alpha.some((v) => v > 0 && v < 1) && alpha.some((v) => v === 0 || v === 1), 'the curve leaves some alpha partial and settles some');
  });
});

/** x with sigma·x = v, by Gaussian elimination with partial pivoting. */
function solve3(sigma: number[][], v: number[]): number[] {
  const m = sigma.map((row, i) => [...row, v[i]!]);
  for (let col = 0; col < 3; col++) {
    const pivot = [col, col + 1, col + 2].filter((r) => r < 3).reduce((best, r) => (Math.abs(m[r]![col]!) > Math.abs(m[best]![col]!) ? r : best));
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    for (let r = 0; r < 3; r++) {
      if (r === col) continue;
      const f = m[r]![col]! / m[col]![col]!;
      for (let k = col; k < 4; k++) m[r]![k]! -= f * m[col]![k]!;
    }
  }
  return [0, 1, 2].map((r) => m[r]![3]! / m[r]![r]!);
}

describe('colour fields', () => {
  it('are two blur-fusion steps (Forte & Pitié): α-weighted blurs of F and B, F re-solved from the photo in between', async () => {
    const width = 53, height = 31, wide = 9, narrow = 2;
    const image: GuidePlanes = [testPlane(width, height, 5), testPlane(width, height, 6), testPlane(width, height, 7)];
    const alpha = testPlane(width, height, 8).map((v) => Math.min(1, Math.max(0, v)));
    const step = (fg: ArrayLike<number>[], bg: ArrayLike<number>[], radius: number) => {
      const blur = (values: ArrayLike<number>) => plainBoxMean(Float32Array.from(values), width, height, radius);
      const blurredAlpha = blur(alpha);
      const smoothFg = fg.map((f) => blur(Array.from(f, (v, i) => v * alpha[i]!)).map((s, i) => s / (blurredAlpha[i]! + 1e-5)));
      const smoothBg = bg.map((b) => blur(Array.from(b, (v, i) => v * (1 - alpha[i]!))).map((s, i) => s / (1 - blurredAlpha[i]! + 1e-5)));
      const solved = image.map((im, c) => im.map((v, i) => {
        const a = alpha[i]!, f = smoothFg[c]![i]!, b = smoothBg[c]![i]!;
        return Math.min(1, Math.max(0, f + a * (v - a * f - (1 - a) * b)));
      }));
      return { smoothFg, smoothBg, solved };
    };
    const first = step(image, image, wide);
    const second = step(first.solved, first.smoothBg, narrow);
    const fields = await colourFields(image, alpha, width, height, wide, narrow);
    fields.foreground.forEach((plane, c) => assertClose(plane, second.smoothFg[c]!, 1e-4, `foreground ${c}`));
    fields.background.forEach((plane, c) => assertClose(plane, second.smoothBg[c]!, 1e-4, `background ${c}`));
  });
});

/** Bilinear enlargement sampling where libvips does (output i at source i · scale − ½ on both axes unless neither changes), sample by sample in f64. */
function plainStretch(source: Uint8Array, width: number, height: number, outWidth: number, outHeight: number): Uint8Array {
  const out = new Uint8Array(outWidth * outHeight * 3);
  const same = width === outWidth && height === outHeight;
  const sample = (i: number, size: number, outSize: number) => {
    const at = same ? i : Math.min(Math.max(i * (size / outSize) - 0.5, 0), size - 1);
    return { lo: Math.floor(at), hi: Math.min(Math.floor(at) + 1, size - 1), t: at - Math.floor(at) };
  };
  for (let y = 0; y < outHeight; y++) {
    const v = sample(y, height, outHeight);
    for (let x = 0; x < outWidth; x++) {
      const u = sample(x, width, outWidth);
      for (let c = 0; c < 3; c++) {
        const at = (row: number, col: number) => source[(row * width + col) * 3 + c]!;
        const top = at(v.lo, u.lo) + (at(v.lo, u.hi) - at(v.lo, u.lo)) * u.t;
        const bottom = at(v.hi, u.lo) + (at(v.hi, u.hi) - at(v.hi, u.lo)) * u.t;
        out[(y * outWidth + x) * 3 + c] = Math.round(top + (bottom - top) * v.t);
      }
    }
  }
  return out;
}

describe('stretching the model input', () => {
  const photo = (width: number, height: number) => Uint8Array.from({ length: width * height * 3 }, (_, i) => (i * 37 + ((i / 3) | 0) * 11) % 256);

  it('is the bilinear enlargement, placed in its rectangle with the rest of the canvas kept', () => {
    for (const [width, height, outWidth, outHeight, left, top] of [[37, 23, 64, 64, 0, 0], [9, 30, 40, 31, 5, 2], [1, 1, 7, 5, 1, 1], [20, 3, 20, 48, 3, 0]] as const) {
      const source = photo(width, height);
      const canvasWidth = outWidth + left + 4, canvasHeight = outHeight + top + 3;
      const canvas = new Uint8Array(canvasWidth * canvasHeight * 3).fill(128);
      stretchRgbInto({ source, width, height, canvas, canvasWidth, left, top, outWidth, outHeight });
      const expected = plainStretch(source, width, height, outWidth, outHeight);
      for (let y = 0; y < canvasHeight; y++) {
        for (let x = 0; x < canvasWidth; x++) {
          const inside = x >= left && x < left + outWidth && y >= top && y < top + outHeight;
          for (let c = 0; c < 3; c++) {
            const value = canvas[(y * canvasWidth + x) * 3 + c]!;
            // f32 in the kernel against f64 here: a value at exactly half a level may round either way.
            if (inside) assert.ok(Math.abs(value - expected[((y - top) * outWidth + x - left) * 3 + c]!) <= 1, `${width}×${height} → ${outWidth}×${outHeight} at ${x},${y}`);
            else assert.equal(value, 128, `${width}×${height}: canvas outside the rectangle at ${x},${y}`);
          }
        }
      }
    }
  });

  it("gives sharp's linear enlargement, which the model's input was made with before, to within one level", async () => {
    for (const [width, height] of [[800, 618], [288, 278], [1, 1], [1000, 7], [1024, 300]] as const) {
      const source = photo(width, height);
      const expected = await sharp(source, { raw: { width, height, channels: 3 } }).resize(1024, 1024, { fit: 'fill', kernel: 'linear' }).raw().toBuffer();
      const canvas = new Uint8Array(1024 * 1024 * 3);
      stretchRgbInto({ source, width, height, canvas, canvasWidth: 1024, left: 0, top: 0, outWidth: 1024, outHeight: 1024 });
      let worst = 0;
      for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(canvas[i]! - expected[i]!));
      assert.ok(worst <= 1, `${width}×${height}: a value ${worst} levels from sharp's`);
    }
  });

  it('copies the photo unchanged when it already has the size, and refuses to shrink', () => {
    const source = photo(31, 17);
    const canvas = new Uint8Array(31 * 17 * 3);
    stretchRgbInto({ source, width: 31, height: 17, canvas, canvasWidth: 31, left: 0, top: 0, outWidth: 31, outHeight: 17 });
    assert.deepEqual(canvas, source);
    assert.throws(() => stretchRgbInto({ source, width: 31, height: 17, canvas, canvasWidth: 31, left: 0, top: 0, outWidth: 30, outHeight: 17 }), /only enlarges/);
  });

  it('gives the same bytes in a band thread as here', async () => {
    const job = () => ({ source: photo(53, 41), width: 53, height: 41, canvas: new Uint8Array(100 * 90 * 3).fill(128), canvasWidth: 100, left: 10, top: 5, outWidth: 80, outHeight: 77 });
    const here = job();
    stretchRgbInto(here);
    assert.deepEqual(await stretchInThread(job()), here.canvas);
  });
});

describe('kernels in the band threads', () => {
  it('write the same planes as on the calling thread into shared ones, solved in bands of rows with their margins', async () => {
    const curve = alphaCurve(2);
    for (const [width, height, radius] of [[97, 61, 4], [211, 150, 4], [64, 300, 20], [120, 129, 16]] as const) {
      const n = width * height;
      const planes = sharedPlanes();
      const inputs = [1, 2, 3, 4].map((seed) => {
        const plane = planes.plane(n);
        plane.set(testPlane(width, height, seed));
        return plane;
      });
      const shared = (count: number) => Array.from({ length: count }, () => planes.plane(n).fill(Number.NaN));
      const here = (count: number) => Array.from({ length: count }, () => new Float32Array(n));
      const job = { inputs, width, height, radius, epsilon: 1e-3, curve };
      const [threaded, alone] = [shared(5), here(5)];
      await guidedInThreads({ ...job, outputs: threaded });
      await solveHere({ ...job, outputs: alone });
      threaded.forEach((plane, k) => assertClose(plane, alone[k]!, 1e-5, `${width}×${height} r=${radius} guided plane ${k}`));

      const fieldsJob = { inputs, width, height, wideRadius: 7, narrowRadius: 2 };
      const [fieldsThreaded, fieldsAlone] = [shared(6), here(6)];
      await fieldsInThreads({ ...fieldsJob, outputs: fieldsThreaded });
      await fieldsHere({ ...fieldsJob, outputs: fieldsAlone });
      fieldsThreaded.forEach((plane, k) => assertClose(plane, fieldsAlone[k]!, 1e-5, `${width}×${height} field ${k}`));
      planes.release();
    }
  });

  it('refuse planes they could not write in place', async () => {
    const n = 97 * 61;
    const job = { inputs: [1, 2, 3, 4].map(() => new Float32Array(n)), outputs: Array.from({ length: 5 }, () => new Float32Array(n)), width: 97, height: 61, radius: 4, epsilon: 1e-3, curve: alphaCurve(1) };
    await assert.rejects(guidedInThreads(job), /shared planes/);
  });
});
