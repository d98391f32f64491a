// AssemblyScript, compiled to WebAssembly with SIMD by `npm run build:kernels` (index.ts; see
// ../kernels.ts, which lays the planes out in this module's memory and calls it). The working-size
// arithmetic on float planes that the guided filter (guided.ts) and the colour fields
// (colour-fields.ts) are made of, and the planes' resampling: in JavaScript it ran element by
// element with a float conversion on every typed-array access; here the column sums, products and
// means go four or two lanes at a time. Planes are f32, one value per pixel, row-major, at byte
// offsets given by the caller.

/**
 * Mean over the (2r+1)² window around each pixel, the window clipped at the borders, written over
 * the plane at `plane`. `scratch` takes the row sums (one plane), `column` the running column sums and
 * `inverseCols` the reciprocal window widths (each `width` f64). Running sums are kept in f64; a
 * small radius's windows are summed directly in f32 (boxMeanDirect).
 */
export function boxMean(plane: usize, scratch: usize, column: usize, inverseCols: usize, width: i32, height: i32, radius: i32): void {
  // A radius beyond the plane's size means the whole plane; clamping it keeps the index arithmetic small.
  const r = min(radius, max(width, height));
  if (r <= directRadius) {
    boxMeanDirect(plane, scratch, inverseCols, width, height, r);
    return;
  }
  const w = <usize>width;
  const rowBytes = w << 2;
  // Four rows at a time: each row's running sum is a chain of dependent f64 additions, and four
  // independent chains keep the core busy where one waits on each addition's latency. Every row's
  // sums are the same operations in the same order either way.
  let y = 0;
  for (; y + 4 <= height; y += 4) rowSumsOfFour(plane + <usize>y * rowBytes, scratch + <usize>y * rowBytes, rowBytes, width, r);
  for (; y < height; y++) rowSums(plane + <usize>y * rowBytes, scratch + <usize>y * rowBytes, width, r);
  for (let x = 0; x < width; x++) {
    store<f64>(inverseCols + (<usize>x << 3), 1.0 / <f64>(min(width, x + r + 1) - max(0, x - r)));
    store<f64>(column + (<usize>x << 3), 0);
  }
  // Rows [0, r) start the column sums; stepping to row y adds row y + r and drops row y - r - 1.
  for (let y = 0; y < min(r, height); y++) addRow(column, scratch + <usize>y * w * 4, width, 1);
  for (let y = 0; y < height; y++) {
    const scale = 1.0 / <f64>(min(height, y + r + 1) - max(0, y - r));
    const out = plane + <usize>y * w * 4;
    if (y + r < height && y - r - 1 >= 0) {
      slideColumns(column, scratch + <usize>(y + r) * w * 4, scratch + <usize>(y - r - 1) * w * 4, inverseCols, scale, out, width);
    } else {
      if (y + r < height) addRow(column, scratch + <usize>(y + r) * w * 4, width, 1);
      if (y - r - 1 >= 0) addRow(column, scratch + <usize>(y - r - 1) * w * 4, width, -1);
      for (let x = 0; x < width; x++) {
        const at = <usize>x;
        store<f32>(out + (at << 2), <f32>(load<f64>(column + (at << 3)) * load<f64>(inverseCols + (at << 3)) * scale));
      }
    }
  }
}

/**
 * Radii up to this are summed directly: 2r + 1 additions per value, sixteen columns at a time in f32,
 * where the running sums take one addition and one subtraction per value but in dependent f64 chains.
 */
const directRadius = 8;

/**
 * boxMean for a small radius: each window's values added in turn, left to right and top to bottom
 * (the border windows clipped), sixteen columns at a time in four chains of f32 lanes; the columns
 * left over (at most 15 + r a row) one at a time by the same additions in the same order. A window's
 * sum depends only on the values in it, so a band of rows gets the values a solve of the whole plane
 * gives. `inverseCols` holds the reciprocal window widths as f32 here.
 */
function boxMeanDirect(plane: usize, scratch: usize, inverseCols: usize, width: i32, height: i32, r: i32): void {
  const rowBytes = <usize>width << 2;
  for (let y = 0; y < height; y++) {
    const row = plane + <usize>y * rowBytes, out = scratch + <usize>y * rowBytes;
    let x = 0;
    for (; x < min(r, width); x++) store<f32>(out + (<usize>x << 2), windowSum(row, max(0, x - r), min(width - 1, x + r)));
    for (; x + 15 + r < width; x += 16) {
      let at = row + (<usize>(x - r) << 2);
      let s0 = v128.load(at), s1 = v128.load(at, 16), s2 = v128.load(at, 32), s3 = v128.load(at, 48);
      for (let d = 0; d < 2 * r; d++) {
        at += 4;
        s0 = f32x4.add(s0, v128.load(at));
        s1 = f32x4.add(s1, v128.load(at, 16));
        s2 = f32x4.add(s2, v128.load(at, 32));
        s3 = f32x4.add(s3, v128.load(at, 48));
      }
      const o = out + (<usize>x << 2);
      v128.store(o, s0);
      v128.store(o, s1, 16);
      v128.store(o, s2, 32);
      v128.store(o, s3, 48);
    }
    for (; x < width; x++) store<f32>(out + (<usize>x << 2), windowSum(row, max(0, x - r), min(width - 1, x + r)));
  }
  for (let x = 0; x < width; x++) store<f32>(inverseCols + (<usize>x << 2), <f32>(1.0 / <f64>(min(width, x + r + 1) - max(0, x - r))));
  for (let y = 0; y < height; y++) {
    const first = max(0, y - r), last = min(height - 1, y + r);
    const scale = <f32>(1.0 / <f64>(last - first + 1));
    const top = scratch + <usize>first * rowBytes;
    const out = plane + <usize>y * rowBytes;
    const s = f32x4.splat(scale);
    let x = 0;
    for (; x + 16 <= width; x += 16) {
      let at = top + (<usize>x << 2);
      let s0 = v128.load(at), s1 = v128.load(at, 16), s2 = v128.load(at, 32), s3 = v128.load(at, 48);
      for (let j = first; j < last; j++) {
        at += rowBytes;
        s0 = f32x4.add(s0, v128.load(at));
        s1 = f32x4.add(s1, v128.load(at, 16));
        s2 = f32x4.add(s2, v128.load(at, 32));
        s3 = f32x4.add(s3, v128.load(at, 48));
      }
      const o = out + (<usize>x << 2), inverse = inverseCols + (<usize>x << 2);
      v128.store(o, f32x4.mul(f32x4.mul(s0, v128.load(inverse)), s));
      v128.store(o, f32x4.mul(f32x4.mul(s1, v128.load(inverse, 16)), s), 16);
      v128.store(o, f32x4.mul(f32x4.mul(s2, v128.load(inverse, 32)), s), 32);
      v128.store(o, f32x4.mul(f32x4.mul(s3, v128.load(inverse, 48)), s), 48);
    }
    for (; x < width; x++) {
      let at = top + (<usize>x << 2);
      let sum = load<f32>(at);
      for (let j = first; j < last; j++) {
        at += rowBytes;
        sum += load<f32>(at);
      }
      store<f32>(out + (<usize>x << 2), sum * load<f32>(inverseCols + (<usize>x << 2)) * scale);
    }
  }
}

/** The values of a row from index `from` to `to`, both included, added in turn in f32. */
function windowSum(row: usize, from: i32, to: i32): f32 {
  let sum: f32 = 0;
  for (let i = from; i <= to; i++) sum += load<f32>(row + (<usize>i << 2));
  return sum;
}

// A row's horizontal window sums, written to `sums`: at x the window is [x - r, x + r] ∩ [0, width),
// and stepping to x + 1 adds x + r + 1 and drops x - r. Between interiorFrom and interiorTo both
// ends are inside the row.

/** The row's sums before its interior; returns the running sum at interiorFrom. */
function sumsBeforeInterior(row: usize, sums: usize, width: i32, r: i32): f64 {
  let acc: f64 = 0;
  const first = min(width, r + 1);
  for (let x = 0; x < first; x++) acc += <f64>load<f32>(row + (<usize>x << 2));
  for (let x = 0, end = min(r, width); x < end; x++) {
    store<f32>(sums + (<usize>x << 2), <f32>acc);
    if (x + r + 1 < width) acc += <f64>load<f32>(row + (<usize>(x + r + 1) << 2));
  }
  return acc;
}

/** The row's sums from `from` (interiorTo) to its end, `acc` the running sum there. */
function sumsAfterInterior(row: usize, sums: usize, width: i32, r: i32, from: i32, acc: f64): void {
  for (let x = from; x < width; x++) {
    store<f32>(sums + (<usize>x << 2), <f32>acc);
    if (x + r + 1 < width) acc += <f64>load<f32>(row + (<usize>(x + r + 1) << 2));
    if (x - r >= 0) acc -= <f64>load<f32>(row + (<usize>(x - r) << 2));
  }
}

/** The window sums of one row (at `row`) into `sums`. */
function rowSums(row: usize, sums: usize, width: i32, r: i32): void {
  const interiorFrom = min(r, width);
  const interiorTo = max(interiorFrom, width - r - 1);
  let acc = sumsBeforeInterior(row, sums, width, r);
  for (let x = interiorFrom; x < interiorTo; x++) {
    store<f32>(sums + (<usize>x << 2), <f32>acc);
    acc += <f64>load<f32>(row + (<usize>(x + r + 1) << 2)) - <f64>load<f32>(row + (<usize>(x - r) << 2));
  }
  sumsAfterInterior(row, sums, width, r, interiorTo, acc);
}

/** rowSums for the four rows from `row` (`rowBytes` apart), their interiors stepped together. */
function rowSumsOfFour(row: usize, sums: usize, rowBytes: usize, width: i32, r: i32): void {
  const interiorFrom = min(r, width);
  const interiorTo = max(interiorFrom, width - r - 1);
  let a0 = sumsBeforeInterior(row, sums, width, r);
  let a1 = sumsBeforeInterior(row + rowBytes, sums + rowBytes, width, r);
  let a2 = sumsBeforeInterior(row + 2 * rowBytes, sums + 2 * rowBytes, width, r);
  let a3 = sumsBeforeInterior(row + 3 * rowBytes, sums + 3 * rowBytes, width, r);
  for (let x = interiorFrom; x < interiorTo; x++) {
    const out = sums + (<usize>x << 2);
    const entering = row + (<usize>(x + r + 1) << 2);
    const leaving = row + (<usize>(x - r) << 2);
    store<f32>(out, <f32>a0);
    store<f32>(out + rowBytes, <f32>a1);
    store<f32>(out + 2 * rowBytes, <f32>a2);
    store<f32>(out + 3 * rowBytes, <f32>a3);
    a0 += <f64>load<f32>(entering) - <f64>load<f32>(leaving);
    a1 += <f64>load<f32>(entering + rowBytes) - <f64>load<f32>(leaving + rowBytes);
    a2 += <f64>load<f32>(entering + 2 * rowBytes) - <f64>load<f32>(leaving + 2 * rowBytes);
    a3 += <f64>load<f32>(entering + 3 * rowBytes) - <f64>load<f32>(leaving + 3 * rowBytes);
  }
  sumsAfterInterior(row, sums, width, r, interiorTo, a0);
  sumsAfterInterior(row + rowBytes, sums + rowBytes, width, r, interiorTo, a1);
  sumsAfterInterior(row + 2 * rowBytes, sums + 2 * rowBytes, width, r, interiorTo, a2);
  sumsAfterInterior(row + 3 * rowBytes, sums + 3 * rowBytes, width, r, interiorTo, a3);
}

/** column += sign · row (f32 row into f64 sums). */
function addRow(column: usize, row: usize, width: i32, sign: f64): void {
  for (let x = 0; x < width; x++) {
    const at = <usize>x;
    store<f64>(column + (at << 3), load<f64>(column + (at << 3)) + sign * <f64>load<f32>(row + (at << 2)));
  }
}

/** One step of the vertical window: the entering row added, the leaving one dropped, the means written to `out`; four columns at a time. */
function slideColumns(column: usize, entering: usize, leaving: usize, inverseCols: usize, scale: f64, out: usize, width: i32): void {
  const s = f64x2.splat(scale);
  let x = 0;
  for (; x + 4 <= width; x += 4) {
    const at = <usize>x;
    const e = v128.load(entering + (at << 2));
    const l = v128.load(leaving + (at << 2));
    const eHigh = i32x4.shuffle(e, e, 2, 3, 0, 1);
    const lHigh = i32x4.shuffle(l, l, 2, 3, 0, 1);
    const c0 = f64x2.add(v128.load(column + (at << 3)), f64x2.sub(f64x2.promote_low_f32x4(e), f64x2.promote_low_f32x4(l)));
    const c1 = f64x2.add(v128.load(column + (at << 3) + 16), f64x2.sub(f64x2.promote_low_f32x4(eHigh), f64x2.promote_low_f32x4(lHigh)));
    v128.store(column + (at << 3), c0);
    v128.store(column + (at << 3) + 16, c1);
    const m0 = f32x4.demote_f64x2_zero(f64x2.mul(f64x2.mul(c0, v128.load(inverseCols + (at << 3))), s));
    const m1 = f32x4.demote_f64x2_zero(f64x2.mul(f64x2.mul(c1, v128.load(inverseCols + (at << 3) + 16)), s));
    v128.store(out + (at << 2), i32x4.shuffle(m0, m1, 0, 1, 4, 5));
  }
  for (; x < width; x++) {
    const at = <usize>x;
    const c = load<f64>(column + (at << 3)) + <f64>load<f32>(entering + (at << 2)) - <f64>load<f32>(leaving + (at << 2));
    store<f64>(column + (at << 3), c);
    store<f32>(out + (at << 2), <f32>(c * load<f64>(inverseCols + (at << 3)) * scale));
  }
}

/** out = x · y over n values, four at a time. */
export function product(x: usize, y: usize, out: usize, n: i32): void {
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const at = <usize>i << 2;
    v128.store(out + at, f32x4.mul(v128.load(x + at), v128.load(y + at)));
  }
  for (; i < n; i++) {
    const at = <usize>i << 2;
    store<f32>(out + at, load<f32>(x + at) * load<f32>(y + at));
  }
}

/** The k-th of the planes of `size` bytes laid out one after another from `base`. */
// @ts-ignore: decorator
@inline
export function planeAt(base: usize, size: usize, k: i32): usize {
  return base + <usize>k * size;
}

/**
 * Bilinear resampling of a plane `sourceWidth` wide into width × height at `out`, from the sample
 * tables the caller computed (../planes.ts, axisSamples): for each output column and row the two
 * source indices (i32) and the weight of the second (f32). In f64 and in the order of the JavaScript
 * it replaced, so the values are the same to the last bit.
 */
export function resamplePlane(source: usize, sourceWidth: i32, out: usize, width: i32, height: i32, xLo: usize, xHi: usize, xT: usize, yLo: usize, yHi: usize, yT: usize): void {
  const rowBytes = <usize>sourceWidth << 2;
  for (let y = 0; y < height; y++) {
    const at = <usize>y << 2;
    const r0 = source + <usize>load<i32>(yLo + at) * rowBytes;
    const r1 = source + <usize>load<i32>(yHi + at) * rowBytes;
    const ty = <f64>load<f32>(yT + at);
    const row = out + <usize>y * (<usize>width << 2);
    for (let x = 0; x < width; x++) {
      const ax = <usize>x << 2;
      const x0 = <usize>load<i32>(xLo + ax) << 2;
      const x1 = <usize>load<i32>(xHi + ax) << 2;
      const tx = <f64>load<f32>(xT + ax);
      const a = <f64>load<f32>(r0 + x0), b = <f64>load<f32>(r0 + x1);
      const c = <f64>load<f32>(r1 + x0), d = <f64>load<f32>(r1 + x1);
      const top = a + (b - a) * tx;
      const bottom = c + (d - c) * tx;
      store<f32>(row + ax, <f32>(top + (bottom - top) * ty));
    }
  }
}

/**
 * Interleaved RGB bytes (`count` pixels at `rgb`) into three f32 planes one after another at `out`,
 * each byte through `table` (256 f32: the caller's value for each byte).
 */
export function unpackRgb(rgb: usize, count: i32, table: usize, out: usize): void {
  const plane = <usize>count << 2;
  for (let i = 0; i < count; i++) {
    const p = rgb + <usize>i * 3;
    const at = out + (<usize>i << 2);
    store<f32>(at, load<f32>(table + (<usize>load<u8>(p) << 2)));
    store<f32>(at + plane, load<f32>(table + (<usize>load<u8>(p + 1) << 2)));
    store<f32>(at + 2 * plane, load<f32>(table + (<usize>load<u8>(p + 2) << 2)));
  }
}
