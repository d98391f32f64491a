// Edge-aware refinement of the mask: a colour-guided filter (He, Sun & Tang) solved at the working
// resolution, whose linear coefficients are then upsampled and applied to the full-resolution photo
// ("fast guided filter", He & Sun 2015; at full size in kernels/compose.ts). The alpha so follows
// the photo's edges at full size while the costly solve stays under a megapixel.
import { guidedMatteInPlace } from './kernels.ts';

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
