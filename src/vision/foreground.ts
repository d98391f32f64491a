// Foreground colour estimation ("colour decontamination") by blur fusion (Forte & Pitié 2021): in
// semi-transparent pixels the photo is a mix α·F + (1−α)·B of subject and old background; solving
// for F with smooth local estimates of F and B removes the old background's tint, so the cutout
// shows no fringe on a new background. The smooth estimates are made at the working resolution and
// upsampled; only the semi-transparent pixels are touched at full size.
import { axisSamples, boxMeansHere, type BoxMeans } from './planes.ts';
import type { GuidePlanes } from './guided-filter.ts';

/** Smooth local foreground and background colours at the working resolution, values in [0, 1]. */
export interface ColourFields {
  foreground: GuidePlanes;
  background: GuidePlanes;
  width: number;
  height: number;
}

/** One blur-fusion step: blurred F (weighted by α) and B (weighted by 1−α), and the re-solved F. */
async function fuse(image: GuidePlanes, fg: GuidePlanes, bg: GuidePlanes, alpha: Float32Array, width: number, height: number, radius: number, means: BoxMeans) {
  const n = alpha.length;
  const weighted = (plane: Float32Array, byAlpha: boolean) => {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = plane[i]! * (byAlpha ? alpha[i]! : 1 - alpha[i]!);
    return out;
  };
  const [blurredAlpha, ...sums] = (await means(
    [alpha.slice(), weighted(fg[0], true), weighted(fg[1], true), weighted(fg[2], true), weighted(bg[0], false), weighted(bg[1], false), weighted(bg[2], false)],
    width,
    height,
    radius,
  )) as [Float32Array, ...Float32Array[]];
  const smoothFg = sums.slice(0, 3).map((sum) => {
    for (let i = 0; i < n; i++) sum[i] = sum[i]! / (blurredAlpha[i]! + 1e-5);
    return sum;
  }) as GuidePlanes;
  const smoothBg = sums.slice(3, 6).map((sum) => {
    for (let i = 0; i < n; i++) sum[i] = sum[i]! / (1 - blurredAlpha[i]! + 1e-5);
    return sum;
  }) as GuidePlanes;
  const solved = [0, 1, 2].map((c) => {
    const out = new Float32Array(n);
    const f = smoothFg[c]!, b = smoothBg[c]!, im = image[c]!;
    for (let i = 0; i < n; i++) {
      const a = alpha[i]!;
      const v = f[i]! + a * (im[i]! - a * f[i]! - (1 - a) * b[i]!);
      out[i] = v < 0 ? 0 : v > 1 ? 1 : v;
    }
    return out;
  }) as GuidePlanes;
  return { smoothFg, smoothBg, solved };
}

/** Two blur-fusion steps, a wide one then a narrow one, as the paper recommends; the box means go to `means`. */
export async function colourFields(
  image: GuidePlanes,
  alpha: Float32Array,
  width: number,
  height: number,
  wideRadius: number,
  narrowRadius: number,
  means: BoxMeans = boxMeansHere,
): Promise<ColourFields> {
  const first = await fuse(image, image, image, alpha, width, height, wideRadius, means);
  const second = await fuse(image, first.solved, first.smoothBg, alpha, width, height, narrowRadius, means);
  return { foreground: second.smoothFg, background: second.smoothBg, width, height };
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
