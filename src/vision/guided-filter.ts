// Edge-aware refinement of the mask: a colour-guided filter (He, Sun & Tang) solved at the working
// resolution, whose linear coefficients are then upsampled and applied to the full-resolution photo
// ("fast guided filter", He & Sun 2015; at full size in kernels/compose.ts). The alpha so follows
// the photo's edges at full size while the costly solve stays under a megapixel.
import { allRows, guidedMatteRows } from './kernels.ts';
import { heapPlanes, type PlaneSet } from './shared-planes.ts';

/** The photo at the working resolution, one plane per colour channel, values in [0, 1]. */
export type GuidePlanes = [Float32Array, Float32Array, Float32Array];

/** q = a·I + b per pixel, smoothed: the filter's output is this linear map of the guide's colours. */
export interface GuidedCoefficients {
  a: GuidePlanes;
  b: Float32Array;
  width: number;
  height: number;
}

/** The guided filter over width × height planes. */
export interface GuidedJob {
  /** The guide's r, g and b planes and the mask. */
  inputs: Float32Array[];
  /** Written in full: a_r, a_g, a_b, b and the working-size alpha. */
  outputs: Float32Array[];
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
 * Solves a job, on this thread or others: the pipeline's solver runs in the band threads
 * (cutout-bands.ts), which read and write shared planes in place (shared-planes.ts).
 */
export type GuidedSolver = (job: GuidedJob) => Promise<void>;

export const solveHere: GuidedSolver = async ({ inputs, outputs, width, height, radius, epsilon, curve }) => {
  guidedMatteRows(inputs, outputs, width, height, allRows(height), radius, epsilon, curve);
};

/**
 * The colour guided filter of `mask` (working resolution, values in [0, 1]) under `guide`: its
 * coefficients, and the alpha they give at the working size through `curve` (values in [0, 1]),
 * in planes taken from `planes`. The arithmetic (17 box means, products and a 3×3 solve per pixel)
 * is WebAssembly (kernels/guided.ts).
 */
export async function guidedMatte(
  guide: GuidePlanes,
  mask: Float32Array,
  width: number,
  height: number,
  options: { radius: number; epsilon: number; curve: Uint8Array },
  solve: GuidedSolver = solveHere,
  planes: PlaneSet = heapPlanes,
): Promise<{ coefficients: GuidedCoefficients; alpha: Float32Array }> {
  const [ar, ag, ab, b, alpha] = Array.from({ length: 5 }, () => planes.plane(width * height)) as [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array];
  await solve({ inputs: [...guide, mask], outputs: [ar, ag, ab, b, alpha], width, height, ...options });
  return { coefficients: { a: [ar, ag, ab], b, width, height }, alpha };
}
