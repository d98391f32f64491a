// AssemblyScript (see planes.ts): the colour guided filter's solve at the working size — the
// window means of the guide, the mask and their products, a 3×3 solve per pixel (four at a time in
// f32 lanes), and the coefficients' means.
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
  for (; i + 4 <= n; i += 4) solvePixels(base, size, <usize>i << 2, <f32>epsilon);
  for (; i < n; i++) solvePixel(base, size, <usize>i << 2, <f32>epsilon);
  for (let k = 0; k < 4; k++) boxMean(planeAt(base, size, k), scratch, column, inverseCols, width, height, radius);
  workingAlpha(base, size, n, curve, curveLast);
}

/** Plane 4 = the curve's byte for q = a · I + b (clamped to [0, 1]) over 255, four pixels at a time. */
function workingAlpha(base: usize, size: usize, n: i32, curve: usize, curveLast: i32): void {
  const last = f32x4.splat(<f32>curveLast), half = f32x4.splat(0.5), zero = f32x4.splat(0), one = f32x4.splat(1), levels = f32x4.splat(255);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const p = base + (<usize>i << 2);
    let q = f32x4.mul(v128.load(p), v128.load(p + 14 * size));
    q = f32x4.add(q, f32x4.mul(v128.load(p + size), v128.load(p + 15 * size)));
    q = f32x4.add(q, f32x4.mul(v128.load(p + 2 * size), v128.load(p + 16 * size)));
    q = f32x4.add(q, v128.load(p + 3 * size));
    // Rounded half up, as JavaScript's Math.round, which the plain-upsampling path uses too.
    const index = i32x4.trunc_sat_f32x4_u(f32x4.add(f32x4.mul(f32x4.min(one, f32x4.max(zero, q)), last), half));
    let bytes = i32x4.splat(load<u8>(curve + <usize>i32x4.extract_lane(index, 0)));
    bytes = i32x4.replace_lane(bytes, 1, load<u8>(curve + <usize>i32x4.extract_lane(index, 1)));
    bytes = i32x4.replace_lane(bytes, 2, load<u8>(curve + <usize>i32x4.extract_lane(index, 2)));
    bytes = i32x4.replace_lane(bytes, 3, load<u8>(curve + <usize>i32x4.extract_lane(index, 3)));
    v128.store(p + 4 * size, f32x4.div(f32x4.convert_i32x4_u(bytes), levels));
  }
  for (; i < n; i++) {
    const at = base + (<usize>i << 2);
    let q = load<f32>(at) * load<f32>(at + 14 * size);
    q += load<f32>(at + size) * load<f32>(at + 15 * size);
    q += load<f32>(at + 2 * size) * load<f32>(at + 16 * size);
    q += load<f32>(at + 3 * size);
    const index = <usize>(min<f32>(1, max<f32>(0, q)) * <f32>curveLast + 0.5);
    store<f32>(at + 4 * size, <f32>load<u8>(curve + index) / 255);
  }
}

/**
 * Four neighbouring pixels, one in each f32 lane: the guide's covariance in the window plus ε·I,
 * solved against its covariance with the mask (symmetric 3×3 inverse by cofactors). Reads the 13
 * means at `at`, writes a_r, a_g, a_b, b there in planes 0–3. In f32, twice the lanes of f64: the
 * matrix's eigenvalues lie between ε and 0.75 + ε (each channel's variance is at most ¼), well within
 * what f32's precision solves (`npm run bench:quality` printed the f64 solve's means to the fourth digit).
 */
// @ts-ignore: decorator
@inline
function solvePixels(base: usize, size: usize, at: usize, epsilon: f32): void {
  const p = base + at;
  const e = f32x4.splat(epsilon);
  const mR = v128.load(p), mG = v128.load(p + size), mB = v128.load(p + 2 * size), mP = v128.load(p + 3 * size);
  const vrr = f32x4.add(f32x4.sub(v128.load(p + 4 * size), f32x4.mul(mR, mR)), e);
  const vrg = f32x4.sub(v128.load(p + 5 * size), f32x4.mul(mR, mG));
  const vrb = f32x4.sub(v128.load(p + 6 * size), f32x4.mul(mR, mB));
  const vgg = f32x4.add(f32x4.sub(v128.load(p + 7 * size), f32x4.mul(mG, mG)), e);
  const vgb = f32x4.sub(v128.load(p + 8 * size), f32x4.mul(mG, mB));
  const vbb = f32x4.add(f32x4.sub(v128.load(p + 9 * size), f32x4.mul(mB, mB)), e);
  const cr = f32x4.sub(v128.load(p + 10 * size), f32x4.mul(mR, mP));
  const cg = f32x4.sub(v128.load(p + 11 * size), f32x4.mul(mG, mP));
  const cb = f32x4.sub(v128.load(p + 12 * size), f32x4.mul(mB, mP));
  const i00 = f32x4.sub(f32x4.mul(vgg, vbb), f32x4.mul(vgb, vgb));
  const i01 = f32x4.sub(f32x4.mul(vrb, vgb), f32x4.mul(vrg, vbb));
  const i02 = f32x4.sub(f32x4.mul(vrg, vgb), f32x4.mul(vrb, vgg));
  const i11 = f32x4.sub(f32x4.mul(vrr, vbb), f32x4.mul(vrb, vrb));
  const i12 = f32x4.sub(f32x4.mul(vrb, vrg), f32x4.mul(vrr, vgb));
  const i22 = f32x4.sub(f32x4.mul(vrr, vgg), f32x4.mul(vrg, vrg));
  const det = f32x4.add(f32x4.add(f32x4.mul(vrr, i00), f32x4.mul(vrg, i01)), f32x4.mul(vrb, i02));
  const aR = f32x4.div(f32x4.add(f32x4.add(f32x4.mul(i00, cr), f32x4.mul(i01, cg)), f32x4.mul(i02, cb)), det);
  const aG = f32x4.div(f32x4.add(f32x4.add(f32x4.mul(i01, cr), f32x4.mul(i11, cg)), f32x4.mul(i12, cb)), det);
  const aB = f32x4.div(f32x4.add(f32x4.add(f32x4.mul(i02, cr), f32x4.mul(i12, cg)), f32x4.mul(i22, cb)), det);
  v128.store(p, aR);
  v128.store(p + size, aG);
  v128.store(p + 2 * size, aB);
  v128.store(p + 3 * size, f32x4.sub(f32x4.sub(f32x4.sub(mP, f32x4.mul(aR, mR)), f32x4.mul(aG, mG)), f32x4.mul(aB, mB)));
}

/** solvePixels for one pixel: the same operations in the same order, so the same values. */
function solvePixel(base: usize, size: usize, at: usize, epsilon: f32): void {
  const p = base + at;
  const mR = load<f32>(p), mG = load<f32>(p + size), mB = load<f32>(p + 2 * size), mP = load<f32>(p + 3 * size);
  const vrr = load<f32>(p + 4 * size) - mR * mR + epsilon;
  const vrg = load<f32>(p + 5 * size) - mR * mG;
  const vrb = load<f32>(p + 6 * size) - mR * mB;
  const vgg = load<f32>(p + 7 * size) - mG * mG + epsilon;
  const vgb = load<f32>(p + 8 * size) - mG * mB;
  const vbb = load<f32>(p + 9 * size) - mB * mB + epsilon;
  const cr = load<f32>(p + 10 * size) - mR * mP;
  const cg = load<f32>(p + 11 * size) - mG * mP;
  const cb = load<f32>(p + 12 * size) - mB * mP;
  const i00 = vgg * vbb - vgb * vgb, i01 = vrb * vgb - vrg * vbb, i02 = vrg * vgb - vrb * vgg;
  const i11 = vrr * vbb - vrb * vrb, i12 = vrb * vrg - vrr * vgb, i22 = vrr * vgg - vrg * vrg;
  const det = vrr * i00 + vrg * i01 + vrb * i02;
  const aR = (i00 * cr + i01 * cg + i02 * cb) / det;
  const aG = (i01 * cr + i11 * cg + i12 * cb) / det;
  const aB = (i02 * cr + i12 * cg + i22 * cb) / det;
  store<f32>(p, aR);
  store<f32>(p + size, aG);
  store<f32>(p + 2 * size, aB);
  store<f32>(p + 3 * size, mP - aR * mR - aG * mG - aB * mB);
}
