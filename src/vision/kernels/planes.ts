// AssemblyScript, compiled to WebAssembly with SIMD by `npm run build:kernels` (index.ts; see
// ../kernels.ts, which lays the planes out in this module's memory and calls it). The working-size arithmetic of
// the guided filter and the colour fields: in JavaScript it ran element by element with a float
// conversion on every typed-array access; here the column sums, products and means go four or two
// lanes at a time. Planes are f32, one value per pixel, row-major, at byte offsets given by the caller.

/**
 * Mean over the (2r+1)² window around each pixel, the window clipped at the borders, written over
 * the plane at `plane`. `scratch` takes the row sums (one plane), `column` the running column sums and
 * `inverseCols` the reciprocal window widths (each `width` f64). Sums are kept in f64.
 */
export function boxMean(plane: usize, scratch: usize, column: usize, inverseCols: usize, width: i32, height: i32, radius: i32): void {
  // A radius beyond the plane's size means the whole plane; clamping it keeps the index arithmetic small.
  const r = min(radius, max(width, height));
  const w = <usize>width;
  for (let y = 0; y < height; y++) {
    const row = plane + <usize>y * w * 4;
    const sums = scratch + <usize>y * w * 4;
    let acc: f64 = 0;
    const first = min(width, r + 1);
    for (let x = 0; x < first; x++) acc += <f64>load<f32>(row + (<usize>x << 2));
    // At x the window is [x - r, x + r] ∩ [0, width); stepping to x + 1 adds x + r + 1 and drops x - r.
    const interiorFrom = min(r, width);
    const interiorTo = max(interiorFrom, width - r - 1);
    let x = 0;
    for (; x < interiorFrom; x++) {
      store<f32>(sums + (<usize>x << 2), <f32>acc);
      if (x + r + 1 < width) acc += <f64>load<f32>(row + (<usize>(x + r + 1) << 2));
    }
    for (; x < interiorTo; x++) {
      store<f32>(sums + (<usize>x << 2), <f32>acc);
      acc += <f64>load<f32>(row + (<usize>(x + r + 1) << 2)) - <f64>load<f32>(row + (<usize>(x - r) << 2));
    }
    for (; x < width; x++) {
      store<f32>(sums + (<usize>x << 2), <f32>acc);
      if (x + r + 1 < width) acc += <f64>load<f32>(row + (<usize>(x + r + 1) << 2));
      if (x - r >= 0) acc -= <f64>load<f32>(row + (<usize>(x - r) << 2));
    }
  }
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
function product(x: usize, y: usize, out: usize, n: i32): void {
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

/**
 * The colour guided filter (He, Sun & Tang) and its output at the working size. At `base`: 17
 * planes of width × height f32, then 2 · width f64, then the alpha curve (`curveLast` + 1 bytes,
 * indexed by q · curveLast). On entry planes 0–3 hold the guide's r, g, b and the mask; on return
 * they hold the coefficients a_r, a_g, a_b and b (averaged over the window), and plane 4 holds
 * the working-size alpha: q = a · I + b clamped to [0, 1], through the curve, over 255. The rest is
 * workspace (nine products, the row sums, a copy of the guide, the column sums and widths).
 */
export function guidedMatte(base: usize, width: i32, height: i32, radius: i32, epsilon: f64, curve: usize, curveLast: i32): void {
  const n = width * height;
  const size = <usize>n << 2;
  const scratch = planeAt(base, size, 13);
  const column = planeAt(base, size, 17);
  const inverseCols = column + (<usize>width << 3);
  for (let c = 0; c < 3; c++) memory.copy(planeAt(base, size, 14 + c), planeAt(base, size, c), size);
  // r·r, r·g, r·b, g·g, g·b, b·b, then r·p, g·p, b·p.
  product(planeAt(base, size, 0), planeAt(base, size, 0), planeAt(base, size, 4), n);
  product(planeAt(base, size, 0), planeAt(base, size, 1), planeAt(base, size, 5), n);
  product(planeAt(base, size, 0), planeAt(base, size, 2), planeAt(base, size, 6), n);
  product(planeAt(base, size, 1), planeAt(base, size, 1), planeAt(base, size, 7), n);
  product(planeAt(base, size, 1), planeAt(base, size, 2), planeAt(base, size, 8), n);
  product(planeAt(base, size, 2), planeAt(base, size, 2), planeAt(base, size, 9), n);
  product(planeAt(base, size, 0), planeAt(base, size, 3), planeAt(base, size, 10), n);
  product(planeAt(base, size, 1), planeAt(base, size, 3), planeAt(base, size, 11), n);
  product(planeAt(base, size, 2), planeAt(base, size, 3), planeAt(base, size, 12), n);
  for (let k = 0; k < 13; k++) boxMean(planeAt(base, size, k), scratch, column, inverseCols, width, height, radius);
  let i = 0;
  for (; i + 2 <= n; i += 2) solvePixelPair(base, size, <usize>i << 2, epsilon);
  for (; i < n; i++) solvePixel(base, size, <usize>i << 2, epsilon);
  for (let k = 0; k < 4; k++) boxMean(planeAt(base, size, k), scratch, column, inverseCols, width, height, radius);
  const last = <f64>curveLast;
  for (let i = 0; i < n; i++) {
    const at = <usize>i << 2;
    let q = <f64>load<f32>(planeAt(base, size, 0) + at) * <f64>load<f32>(planeAt(base, size, 14) + at);
    q += <f64>load<f32>(planeAt(base, size, 1) + at) * <f64>load<f32>(planeAt(base, size, 15) + at);
    q += <f64>load<f32>(planeAt(base, size, 2) + at) * <f64>load<f32>(planeAt(base, size, 16) + at);
    q += <f64>load<f32>(planeAt(base, size, 3) + at);
    // Held as f32 before the lookup, as the JavaScript this replaced did: the same alpha to the last bit.
    q = <f64><f32>min(1.0, max(0.0, q));
    // floor(x + ½): JavaScript's Math.round, which the plain-upsampling path uses too.
    const index = <usize>floor(q * last + 0.5);
    store<f32>(planeAt(base, size, 4) + at, <f32>(<f64>load<u8>(curve + index) / 255.0));
  }
}

// @ts-ignore: decorator
@inline
function planeAt(base: usize, size: usize, k: i32): usize {
  return base + <usize>k * size;
}

/**
 * One pixel: the guide's covariance in the window plus ε·I, solved against its covariance with the
 * mask (symmetric 3×3 inverse by cofactors, in f64). Reads the 13 means at `at`, writes a_r, a_g, a_b, b there in planes 0–3.
 */
// @ts-ignore: decorator
@inline
function solvePixel(base: usize, size: usize, at: usize, epsilon: f64): void {
  const p = base + at;
  const mR = <f64>load<f32>(p), mG = <f64>load<f32>(p + size), mB = <f64>load<f32>(p + 2 * size), mP = <f64>load<f32>(p + 3 * size);
  const vrr = <f64>load<f32>(p + 4 * size) - mR * mR + epsilon;
  const vrg = <f64>load<f32>(p + 5 * size) - mR * mG;
  const vrb = <f64>load<f32>(p + 6 * size) - mR * mB;
  const vgg = <f64>load<f32>(p + 7 * size) - mG * mG + epsilon;
  const vgb = <f64>load<f32>(p + 8 * size) - mG * mB;
  const vbb = <f64>load<f32>(p + 9 * size) - mB * mB + epsilon;
  const cr = <f64>load<f32>(p + 10 * size) - mR * mP;
  const cg = <f64>load<f32>(p + 11 * size) - mG * mP;
  const cb = <f64>load<f32>(p + 12 * size) - mB * mP;
  const i00 = vgg * vbb - vgb * vgb, i01 = vrb * vgb - vrg * vbb, i02 = vrg * vgb - vrb * vgg;
  const i11 = vrr * vbb - vrb * vrb, i12 = vrb * vrg - vrr * vgb, i22 = vrr * vgg - vrg * vrg;
  const det = vrr * i00 + vrg * i01 + vrb * i02;
  const aR = (i00 * cr + i01 * cg + i02 * cb) / det;
  const aG = (i01 * cr + i11 * cg + i12 * cb) / det;
  const aB = (i02 * cr + i12 * cg + i22 * cb) / det;
  store<f32>(p, <f32>aR);
  store<f32>(p + size, <f32>aG);
  store<f32>(p + 2 * size, <f32>aB);
  store<f32>(p + 3 * size, <f32>(mP - aR * mR - aG * mG - aB * mB));
}

/** Two neighbouring f32 values as f64 lanes. */
// @ts-ignore: decorator
@inline
function pairAt(p: usize): v128 {
  return f64x2.promote_low_f32x4(v128.load64_zero(p));
}

/** Two f64 lanes stored as neighbouring f32 values. */
// @ts-ignore: decorator
@inline
function storePair(p: usize, value: v128): void {
  v128.store64_lane(p, f32x4.demote_f64x2_zero(value), 0);
}

/** solvePixel for the pixels at `at` and the next, one in each f64 lane: the same operations in the same order, so the same values. */
// @ts-ignore: decorator
@inline
function solvePixelPair(base: usize, size: usize, at: usize, epsilon: f64): void {
  const p = base + at;
  const e = f64x2.splat(epsilon);
  const mR = pairAt(p), mG = pairAt(p + size), mB = pairAt(p + 2 * size), mP = pairAt(p + 3 * size);
  const vrr = f64x2.add(f64x2.sub(pairAt(p + 4 * size), f64x2.mul(mR, mR)), e);
  const vrg = f64x2.sub(pairAt(p + 5 * size), f64x2.mul(mR, mG));
  const vrb = f64x2.sub(pairAt(p + 6 * size), f64x2.mul(mR, mB));
  const vgg = f64x2.add(f64x2.sub(pairAt(p + 7 * size), f64x2.mul(mG, mG)), e);
  const vgb = f64x2.sub(pairAt(p + 8 * size), f64x2.mul(mG, mB));
  const vbb = f64x2.add(f64x2.sub(pairAt(p + 9 * size), f64x2.mul(mB, mB)), e);
  const cr = f64x2.sub(pairAt(p + 10 * size), f64x2.mul(mR, mP));
  const cg = f64x2.sub(pairAt(p + 11 * size), f64x2.mul(mG, mP));
  const cb = f64x2.sub(pairAt(p + 12 * size), f64x2.mul(mB, mP));
  const i00 = f64x2.sub(f64x2.mul(vgg, vbb), f64x2.mul(vgb, vgb));
  const i01 = f64x2.sub(f64x2.mul(vrb, vgb), f64x2.mul(vrg, vbb));
  const i02 = f64x2.sub(f64x2.mul(vrg, vgb), f64x2.mul(vrb, vgg));
  const i11 = f64x2.sub(f64x2.mul(vrr, vbb), f64x2.mul(vrb, vrb));
  const i12 = f64x2.sub(f64x2.mul(vrb, vrg), f64x2.mul(vrr, vgb));
  const i22 = f64x2.sub(f64x2.mul(vrr, vgg), f64x2.mul(vrg, vrg));
  const det = f64x2.add(f64x2.add(f64x2.mul(vrr, i00), f64x2.mul(vrg, i01)), f64x2.mul(vrb, i02));
  const aR = f64x2.div(f64x2.add(f64x2.add(f64x2.mul(i00, cr), f64x2.mul(i01, cg)), f64x2.mul(i02, cb)), det);
  const aG = f64x2.div(f64x2.add(f64x2.add(f64x2.mul(i01, cr), f64x2.mul(i11, cg)), f64x2.mul(i12, cb)), det);
  const aB = f64x2.div(f64x2.add(f64x2.add(f64x2.mul(i02, cr), f64x2.mul(i12, cg)), f64x2.mul(i22, cb)), det);
  storePair(p, aR);
  storePair(p + size, aG);
  storePair(p + 2 * size, aB);
  storePair(p + 3 * size, f64x2.sub(f64x2.sub(f64x2.sub(mP, f64x2.mul(aR, mR)), f64x2.mul(aG, mG)), f64x2.mul(aB, mB)));
}

/**
 * Blur-fusion colour fields (Forte & Pitié 2021), two steps: a wide window, then a narrow one. At
 * `base`: 12 planes of width × height f32 followed by 2 · width f64. Planes 0–3 hold the photo's r, g,
 * b and the alpha on entry; on return planes 5–7 hold the smooth foreground colours and 8–10 the
 * smooth background colours. Plane 4 takes the blurred alpha, plane 11 the row sums.
 */
export function colourFields(base: usize, width: i32, height: i32, wideRadius: i32, narrowRadius: i32): void {
  const n = width * height;
  const size = <usize>n << 2;
  const scratch = planeAt(base, size, 11);
  const column = planeAt(base, size, 12);
  const inverseCols = column + (<usize>width << 3);
  // First step: foreground and background both start as the photo itself.
  for (let c = 0; c < 3; c++) {
    memory.copy(planeAt(base, size, 5 + c), planeAt(base, size, c), size);
    memory.copy(planeAt(base, size, 8 + c), planeAt(base, size, c), size);
  }
  for (let step = 0; step < 2; step++) {
    const radius = step == 0 ? wideRadius : narrowRadius;
    memory.copy(planeAt(base, size, 4), planeAt(base, size, 3), size);
    // F weighted by α, B by 1 − α, then all seven blurred.
    for (let c = 0; c < 3; c++) weighByAlpha(planeAt(base, size, 5 + c), planeAt(base, size, 8 + c), planeAt(base, size, 3), n);
    for (let k = 4; k < 11; k++) boxMean(planeAt(base, size, k), scratch, column, inverseCols, width, height, radius);
    for (let i = 0; i < n; i++) {
      const at = <usize>i << 2;
      const a = <f64>load<f32>(planeAt(base, size, 4) + at);
      const toFg = 1.0 / (a + 1e-5), toBg = 1.0 / (1 - a + 1e-5);
      for (let c = 0; c < 3; c++) {
        const f = planeAt(base, size, 5 + c) + at, b = planeAt(base, size, 8 + c) + at;
        store<f32>(f, <f32>(<f64>load<f32>(f) * toFg));
        store<f32>(b, <f32>(<f64>load<f32>(b) * toBg));
      }
    }
    // After the first step the foreground is re-solved from the photo (the next step's F); the
    // background stays the smooth estimate.
    if (step == 0) {
      for (let i = 0; i < n; i++) {
        const at = <usize>i << 2;
        const a = <f64>load<f32>(planeAt(base, size, 3) + at);
        for (let c = 0; c < 3; c++) {
          const f = planeAt(base, size, 5 + c) + at;
          const F = <f64>load<f32>(f), B = <f64>load<f32>(planeAt(base, size, 8 + c) + at), I = <f64>load<f32>(planeAt(base, size, c) + at);
          store<f32>(f, <f32>min(1.0, max(0.0, F + a * (I - a * F - (1 - a) * B))));
        }
      }
    }
  }
}

/** f ·= α and b ·= 1 − α over n values, four at a time. */
function weighByAlpha(f: usize, b: usize, alpha: usize, n: i32): void {
  const one = f32x4.splat(1);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const at = <usize>i << 2;
    const a = v128.load(alpha + at);
    v128.store(f + at, f32x4.mul(v128.load(f + at), a));
    v128.store(b + at, f32x4.mul(v128.load(b + at), f32x4.sub(one, a)));
  }
  for (; i < n; i++) {
    const at = <usize>i << 2;
    const a = load<f32>(alpha + at);
    store<f32>(f + at, load<f32>(f + at) * a);
    store<f32>(b + at, load<f32>(b + at) * (1 - a));
  }
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
