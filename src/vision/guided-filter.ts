// Edge-aware refinement of the mask: a colour-guided filter (He, Sun & Tang) solved at the working
// resolution, whose linear coefficients are then upsampled and applied to the full-resolution photo
// ("fast guided filter", He & Sun 2015). The alpha so follows the photo's edges at full size while
// the costly solve stays at about a megapixel.
import { guidedMatteInPlace } from './kernels.ts';
import { axisSamples } from './planes.ts';

/** The photo at the working resolution, one plane per colour channel, values in [0, 1]. */
export type GuidePlanes = [Float32Array, Float32Array, Float32Array];

/** q = a·I + b per pixel, smoothed: the filter's output is this linear map of the guide's colours. */
export interface GuidedCoefficients {
  a: GuidePlanes;
  b: Float32Array;
  width: number;
  height: number;
}

/** The guided filter's inputs: copies of the guide's r, g and b planes, the mask and a spare plane, each width × height. */
export interface GuidedJob {
  planes: Float32Array[];
  width: number;
  height: number;
  /** In working pixels. */
  radius: number;
  /** The regulariser: larger keeps more of the mask, smaller follows colours more. */
  epsilon: number;
  /** Lookup table from q · (length − 1) to the alpha byte (recipe.ts's alphaCurve). */
  curve: Uint8Array;
}

/**
 * Solves a job, on this thread or another, writing [a_r, a_g, a_b, b, working-size alpha] over its
 * planes. The pipeline's solver runs in the band threads (cutout-bands.ts) and may take the planes
 * over: use what it returns.
 */
export type GuidedSolver = (job: GuidedJob) => Promise<Float32Array[]>;

export const solveHere: GuidedSolver = async ({ planes, width, height, radius, epsilon, curve }) => {
  guidedMatteInPlace(planes, width, height, radius, epsilon, curve);
  return planes;
};

/**
 * The colour guided filter of `mask` (working resolution, values in [0, 1]) under `guide`: its
 * coefficients, and the alpha they give at the working size through `curve` (values in [0, 1]).
 * The arithmetic (17 box means, products and a 3×3 solve per pixel) is WebAssembly (kernels/planes.ts).
 */
export async function guidedMatte(
  guide: GuidePlanes,
  mask: Float32Array,
  width: number,
  height: number,
  options: { radius: number; epsilon: number; curve: Uint8Array },
  solve: GuidedSolver = solveHere,
): Promise<{ coefficients: GuidedCoefficients; alpha: Float32Array }> {
  const planes = [guide[0].slice(), guide[1].slice(), guide[2].slice(), mask.slice(), new Float32Array(width * height)];
  const [ar, ag, ab, b, alpha] = await solve({ planes, width, height, ...options });
  if (!ar || !ag || !ab || !b || !alpha) throw new Error('the guided solve returned fewer than five planes');
  return { coefficients: { a: [ar, ag, ab], b, width, height }, alpha };
}

/** Writes one full-size row (y) of alpha into `out`. */
export type AlphaRowWriter = (y: number, out: Uint8Array) => void;

/**
 * Applies the coefficients, bilinearly upsampled, to the full-resolution photo (interleaved 8-bit,
 * `channels` per pixel, colour in the first three; `pixels` holds its rows from `firstRow` on) one
 * row at a time, and passes each value through `curve` (a lookup table from q·1024, clamped, to the
 * alpha byte). Only byte-sized rows exist at full size.
 */
export function fullSizeAlphaRows(
  c: GuidedCoefficients,
  pixels: Uint8Array,
  channels: number,
  width: number,
  height: number,
  curve: Uint8Array,
  firstRow = 0,
): AlphaRowWriter {
  const xs = axisSamples(width, 0, c.width, c.width);
  const ys = axisSamples(height, 0, c.height, c.height);
  const [fa, fg, fb] = c.a, fc = c.b;
  // Per full-size row, the fields are interpolated between two working rows once (the colour
  // coefficients already divided by 255), with each column's slope to the next; per pixel only
  // the step along x remains.
  const cw = c.width;
  const [ra, ga, ba, bb, sa, sg, sb, sc] = Array.from({ length: 8 }, () => new Float32Array(cw)) as [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array];
  const lo = xs.lo, t = xs.t;
  const last = curve.length - 1;
  const settled = settledCells(c, curve);
  const rowSettled = new Int8Array(cw);
  let settledFor = -1;
  // The first full-size column of each working column (lo only grows along a row), and width at the end.
  const firstPixel = new Int32Array(cw + 1);
  for (let k = 0, x = 0; k <= cw; k++) {
    while (x < width && lo[x]! < k) x++;
    firstPixel[k] = x;
  }
  return (y, out) => {
    const r0 = ys.lo[y]! * cw, r1 = ys.hi[y]! * cw, ty = ys.t[y]!;
    // A full-size pixel between four working cells that are all settled the same way gets that
    // alpha without arithmetic: its interpolated coefficients are a convex mix of theirs. Upscaled
    // rows share their pair of working rows, so this is worked out once per pair.
    if (r0 !== settledFor) {
      for (let x = 0; x < cw; x++) {
        const x1 = x + 1 < cw ? x + 1 : x;
        const v = settled[r0 + x]!;
        rowSettled[x] = v !== 0 && settled[r0 + x1] === v && settled[r1 + x] === v && settled[r1 + x1] === v ? v : 0;
      }
      settledFor = r0;
    }
    // Only where the colour decides are the fields needed: each such column's value and slope, from
    // the two working rows around this one.
    for (let x = 0; x < cw; x++) {
      if (rowSettled[x] !== 0) continue;
      const i0 = r0 + x, i1 = r1 + x, j = x + 1 < cw ? 1 : 0;
      const a0 = (fa[i0]! + (fa[i1]! - fa[i0]!) * ty) / 255, a1 = (fa[i0 + j]! + (fa[i1 + j]! - fa[i0 + j]!) * ty) / 255;
      const g0 = (fg[i0]! + (fg[i1]! - fg[i0]!) * ty) / 255, g1 = (fg[i0 + j]! + (fg[i1 + j]! - fg[i0 + j]!) * ty) / 255;
      const b0 = (fb[i0]! + (fb[i1]! - fb[i0]!) * ty) / 255, b1 = (fb[i0 + j]! + (fb[i1 + j]! - fb[i0 + j]!) * ty) / 255;
      const c0 = fc[i0]! + (fc[i1]! - fc[i0]!) * ty, c1 = fc[i0 + j]! + (fc[i1 + j]! - fc[i0 + j]!) * ty;
      ra[x] = a0; sa[x] = a1 - a0;
      ga[x] = g0; sg[x] = g1 - g0;
      ba[x] = b0; sb[x] = b1 - b0;
      bb[x] = c0; sc[x] = c1 - c0;
    }
    // Runs of working columns settled the same way become one fill of their full-size pixels; the
    // arithmetic runs only over the pixels of the other columns.
    const base = (y - firstRow) * width * channels;
    for (let x0 = 0; x0 < cw; ) {
      const fixed = rowSettled[x0]!;
      let end = x0 + 1;
      while (end < cw && rowSettled[end] === fixed) end++;
      if (fixed !== 0) out.fill(fixed > 0 ? 255 : 0, firstPixel[x0]!, firstPixel[end]!);
      else {
        for (let x = firstPixel[x0]!, stop = firstPixel[end]!, p = base + x * channels; x < stop; x++, p += channels) {
          const xc = lo[x]!, tx = t[x]!;
          const q =
            (ra[xc]! + sa[xc]! * tx) * pixels[p]! + (ga[xc]! + sg[xc]! * tx) * pixels[p + 1]! + (ba[xc]! + sb[xc]! * tx) * pixels[p + 2]! + bb[xc]! + sc[xc]! * tx;
          const k = q * last;
          out[x] = curve[k <= 0 ? 0 : k >= last ? last : (k + 0.5) | 0]!;
        }
      }
      x0 = end;
    }
  };
}

/**
 * For each working cell: 1 where q = a·I + b maps through the curve to 255 whatever the colour I
 * in [0, 1]³, −1 where it maps to 0 whatever the colour, 0 where the colour decides. Most of a
 * photo is settled (inside the subject, far background), so most full-size pixels skip the
 * per-pixel arithmetic. The margin keeps float rounding from ever deciding a settled pixel.
 */
function settledCells(c: GuidedCoefficients, curve: Uint8Array): Int8Array {
  const last = curve.length - 1;
  let zeros = 0;
  while (zeros <= last && curve[zeros] === 0) zeros++;
  let firstFull = last + 1;
  while (firstFull > 0 && curve[firstFull - 1] === 255) firstFull--;
  // Index (k + 0.5) | 0 of k = q·last stays ≤ zeros − 1 when k < zeros − 0.5, and ≥ firstFull when k ≥ firstFull − 0.5.
  const state = new Int8Array(c.b.length);
  const [ar, ag, ab] = c.a;
  for (let i = 0; i < state.length; i++) {
    const a0 = ar[i]!, a1 = ag[i]!, a2 = ab[i]!, b = c.b[i]!;
    const low = (b + Math.min(a0, 0) + Math.min(a1, 0) + Math.min(a2, 0)) * last;
    const high = (b + Math.max(a0, 0) + Math.max(a1, 0) + Math.max(a2, 0)) * last;
    const margin = 0.05 + 1e-5 * last * (Math.abs(b) + Math.abs(a0) + Math.abs(a1) + Math.abs(a2));
    if (firstFull <= last && low >= firstFull - 0.5 + margin) state[i] = 1;
    else if (zeros > 0 && high < zeros - 0.5 - margin) state[i] = -1;
  }
  return state;
}
