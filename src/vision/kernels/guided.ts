// AssemblyScript (see planes.ts): the colour guided filter's solve at the working size — the
// window means of the guide, the mask and their products, a 3×3 solve per pixel (two at a time in
// f64x2 lanes), and the coefficients' means.
import { boxMean, planeAt, product } from './planes';

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
