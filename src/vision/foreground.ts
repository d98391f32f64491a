// Foreground colour estimation ("colour decontamination") by blur fusion (Forte & Pitié 2021): in
// semi-transparent pixels the photo is a mix α·F + (1−α)·B of subject and old background; solving
// for F with smooth local estimates of F and B removes the old background's tint, so the cutout
// shows no fringe on a new background. The smooth estimates are made at the working resolution and
// upsampled; only the semi-transparent pixels are touched at full size (kernels/compose.ts).
import { colourFieldsInPlace } from './kernels.ts';
import type { GuidePlanes } from './guided-filter.ts';

/** Smooth local foreground and background colours at the working resolution, values in [0, 1]. */
export interface ColourFields {
  foreground: GuidePlanes;
  background: GuidePlanes;
  width: number;
  height: number;
}

/**
 * Computes the colour fields over [r, g, b, alpha, spare, spare] (each width × height), written over
 * them as [F_r, F_g, F_b, B_r, B_g, B_b], on this thread or others: the pipeline's runs in bands of
 * rows in the band threads (cutout-bands.ts). Use the planes it returns.
 */
export type FieldSolver = (planes: Float32Array[], width: number, height: number, wideRadius: number, narrowRadius: number) => Promise<Float32Array[]>;

export const fieldsHere: FieldSolver = async (planes, width, height, wideRadius, narrowRadius) => {
  colourFieldsInPlace(planes, width, height, wideRadius, narrowRadius);
  return planes;
};

/**
 * Two blur-fusion steps, a wide one then a narrow one, as the paper recommends: box-blurred F
 * (weighted by α) and B (weighted by 1 − α), F re-solved from the photo between the steps. The
 * arithmetic is WebAssembly (kernels/planes.ts).
 */
export async function colourFields(
  image: GuidePlanes,
  alpha: Float32Array,
  width: number,
  height: number,
  wideRadius: number,
  narrowRadius: number,
  solve: FieldSolver = fieldsHere,
): Promise<ColourFields> {
  const n = width * height;
  const planes = [image[0].slice(), image[1].slice(), image[2].slice(), alpha.slice(), new Float32Array(n), new Float32Array(n)];
  const [fr, fg, fb, br, bg, bb] = await solve(planes, width, height, wideRadius, narrowRadius);
  if (!fr || !fg || !fb || !br || !bg || !bb) throw new Error('the colour fields came back with fewer than six planes');
  return { foreground: [fr, fg, fb], background: [br, bg, bb], width, height };
}
