// Foreground colour estimation ("colour decontamination") by blur fusion (Forte & Pitié 2021): in
// semi-transparent pixels the photo is a mix α·F + (1−α)·B of subject and old background; solving
// for F with smooth local estimates of F and B removes the old background's tint, so the cutout
// shows no fringe on a new background. The smooth estimates are made at the working resolution and
// upsampled; only the semi-transparent pixels are touched at full size.
import { colourFieldsInPlace } from './kernels.ts';
import { axisSamples } from './planes.ts';
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
 * them as [F_r, F_g, F_b, B_r, B_g, B_b], on this thread or another: the pipeline's runs in a band
 * thread (cutout-bands.ts) and takes the planes over, so they are detached when it returns.
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

/**
 * The decontaminated colour of a semi-transparent full-size pixel: (x, y) in a width × height image,
 * its alpha in (0, 1) and its photo colour `rgb` (0–255), which is overwritten with the estimate.
 */
export type Decontaminator = (x: number, y: number, alpha: number, rgb: Float64Array) => void;

export function decontaminator(fields: ColourFields, width: number, height: number): Decontaminator {
  const xs = axisSamples(width, 0, fields.width, fields.width);
  const ys = axisSamples(height, 0, fields.height, fields.height);
  const fw = fields.width;
  const planes = [...fields.foreground, ...fields.background];
  // The six fields interpolated to the current full-size row, made when a row first needs them:
  // edge pixels come in runs along a row, so each pixel then only interpolates along x.
  const rows = planes.map(() => new Float32Array(fw));
  const at = new Float64Array(6);
  let preparedRow = -1;
  return (x, y, a, rgb) => {
    if (y !== preparedRow) {
      const r0 = ys.lo[y]! * fw, r1 = ys.hi[y]! * fw, ty = ys.t[y]!;
      for (let p = 0; p < 6; p++) {
        const plane = planes[p]!, row = rows[p]!;
        for (let i = 0; i < fw; i++) row[i] = (plane[r0 + i]! + (plane[r1 + i]! - plane[r0 + i]!) * ty) * 255;
      }
      preparedRow = y;
    }
    const x0 = xs.lo[x]!, x1 = xs.hi[x]!, tx = xs.t[x]!;
    for (let p = 0; p < 6; p++) {
      const row = rows[p]!;
      at[p] = row[x0]! + (row[x1]! - row[x0]!) * tx;
    }
    for (let c = 0; c < 3; c++) {
      const f = at[c]!;
      const b = at[c + 3]!;
      const v = f + a * (rgb[c]! - a * f - (1 - a) * b);
      rgb[c] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  };
}
