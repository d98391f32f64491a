// Foreground colour estimation ("colour decontamination") by blur fusion (Forte & Pitié 2021): in
// semi-transparent pixels the photo is a mix α·F + (1−α)·B of subject and old background; solving
// for F with smooth local estimates of F and B removes the old background's tint, so the cutout
// shows no fringe on a new background. The smooth estimates are made at the working resolution and
// upsampled; only the semi-transparent pixels are touched at full size.
import { axisSamples, boxMean } from './planes.ts';
import type { GuidePlanes } from './guided-filter.ts';

/** Smooth local foreground and background colours at the working resolution, values in [0, 1]. */
export interface ColourFields {
  foreground: GuidePlanes;
  background: GuidePlanes;
  width: number;
  height: number;
}

/** One blur-fusion step: blurred F (weighted by α) and B (weighted by 1−α), and the re-solved F. */
function fuse(image: GuidePlanes, fg: GuidePlanes, bg: GuidePlanes, alpha: Float32Array, width: number, height: number, radius: number) {
  const n = alpha.length;
  const blurredAlpha = boxMean(alpha, width, height, radius);
  const weighted = (plane: Float32Array, byAlpha: boolean) => {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = plane[i]! * (byAlpha ? alpha[i]! : 1 - alpha[i]!);
    return boxMean(out, width, height, radius);
  };
  const smoothFg = [0, 1, 2].map((c) => {
    const sum = weighted(fg[c]!, true);
    for (let i = 0; i < n; i++) sum[i] = sum[i]! / (blurredAlpha[i]! + 1e-5);
    return sum;
  }) as GuidePlanes;
  const smoothBg = [0, 1, 2].map((c) => {
    const sum = weighted(bg[c]!, false);
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

/** Two blur-fusion steps, a wide one then a narrow one, as the paper recommends. */
export function colourFields(image: GuidePlanes, alpha: Float32Array, width: number, height: number, wideRadius: number, narrowRadius: number): ColourFields {
  const first = fuse(image, image, image, alpha, width, height, wideRadius);
  const second = fuse(image, first.solved, first.smoothBg, alpha, width, height, narrowRadius);
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
  return (x, y, a, rgb) => {
    const r0 = ys.lo[y]! * fw, r1 = ys.hi[y]! * fw, x0 = xs.lo[x]!, x1 = xs.hi[x]!, tx = xs.t[x]!, ty = ys.t[y]!;
    const sample = (plane: Float32Array) => {
      const top = plane[r0 + x0]! + (plane[r0 + x1]! - plane[r0 + x0]!) * tx;
      const bottom = plane[r1 + x0]! + (plane[r1 + x1]! - plane[r1 + x0]!) * tx;
      return (top + (bottom - top) * ty) * 255;
    };
    for (let c = 0; c < 3; c++) {
      const f = sample(fields.foreground[c]!);
      const b = sample(fields.background[c]!);
      const v = f + a * (rgb[c]! - a * f - (1 - a) * b);
      rgb[c] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  };
}
