// Foreground colour estimation ("colour decontamination") by blur fusion (Forte & Pitié 2021): in
// semi-transparent pixels the photo is a mix α·F + (1−α)·B of subject and old background; solving
// for F with smooth local estimates of F and B removes the old background's tint, so the cutout
// shows no fringe on a new background. The smooth estimates are made at the working resolution and
// upsampled; only the semi-transparent pixels are touched at full size (kernels/compose.ts).
import { allRows, colourFieldsRows } from './kernels.ts';
import { heapPlanes, type PlaneSet } from './shared-planes.ts';
import type { GuidePlanes } from './guided-filter.ts';

/** Smooth local foreground and background colours at the working resolution, values in [0, 1]. */
export interface ColourFields {
  foreground: GuidePlanes;
  background: GuidePlanes;
  width: number;
  height: number;
}

/** The colour fields over width × height planes. */
export interface FieldsJob {
  /** The photo's r, g and b planes and the alpha. */
  inputs: Float32Array[];
  /** Written in full: F_r, F_g, F_b, B_r, B_g, B_b. */
  outputs: Float32Array[];
  width: number;
  height: number;
  wideRadius: number;
  narrowRadius: number;
}

/**
 * Computes a job, on this thread or others: the pipeline's runs in bands of rows in the band threads
 * (cutout-bands.ts), on shared planes (shared-planes.ts).
 */
export type FieldSolver = (job: FieldsJob) => Promise<void>;

export const fieldsHere: FieldSolver = async ({ inputs, outputs, width, height, wideRadius, narrowRadius }) => {
  colourFieldsRows(inputs, outputs, width, height, allRows(height), wideRadius, narrowRadius);
};

/**
 * Two blur-fusion steps, a wide one then a narrow one, as the paper recommends: box-blurred F
 * (weighted by α) and B (weighted by 1 − α), F re-solved from the photo between the steps, in
 * planes taken from `planes`. The arithmetic is WebAssembly (kernels/colour-fields.ts).
 */
export async function colourFields(
  image: GuidePlanes,
  alpha: Float32Array,
  width: number,
  height: number,
  wideRadius: number,
  narrowRadius: number,
  solve: FieldSolver = fieldsHere,
  planes: PlaneSet = heapPlanes,
): Promise<ColourFields> {
  const [fr, fg, fb, br, bg, bb] = Array.from({ length: 6 }, () => planes.plane(width * height)) as [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array];
  await solve({ inputs: [...image, alpha], outputs: [fr, fg, fb, br, bg, bb], width, height, wideRadius, narrowRadius });
  return { foreground: [fr, fg, fb], background: [br, bg, bb], width, height };
}
