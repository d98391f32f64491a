// Scores of a cutout against ground truth: IoU, boundary IoU, MAE, SAD and a halo measure.
import { boxMean } from '../src/vision/planes.ts';

export interface Scores {
  iou: number;
  boundaryIou: number;
  mae: number;
  /** Sum of absolute alpha differences, in thousands (as matting benchmarks report it). */
  sad: number;
  /** Percent of the edge band showing the old background: see haloPercent. */
  halo: number;
}

export const metricNames: (keyof Scores)[] = ['iou', 'boundaryIou', 'mae', 'sad', 'halo'];
/** Whether a larger value is better. */
export const higherIsBetter: Record<keyof Scores, boolean> = { iou: true, boundaryIou: true, mae: false, sad: false, halo: false };

/** What the scores need from the ground truth, computed once per image. */
export interface Truth {
  alpha: Uint8Array;
  width: number;
  height: number;
  /** Band half-width: 2% of the image diagonal. */
  band: number;
  /** Inner boundary band of the ground truth (Cheng et al. 2021 boundary IoU). */
  inner: Uint8Array;
  /** Both-sides band around the ground truth's edge, where halos live. */
  edge: Uint8Array;
  /** Mean local colour of the true foreground and background around each pixel (3 planes each, 0–255). */
  foreground: Float32Array[];
  background: Float32Array[];
}

function binaryPlane(alpha: Uint8Array, test: (v: number) => boolean): Float32Array {
  const plane = new Float32Array(alpha.length);
  for (let i = 0; i < alpha.length; i++) plane[i] = test(alpha[i]!) ? 1 : 0;
  return plane;
}

/** Pixels of the mask that lie within `band` of its outside (the mask minus its erosion). */
function innerBand(alpha: Uint8Array, width: number, height: number, band: number): Uint8Array {
  const inside = boxMean(binaryPlane(alpha, (v) => v >= 128), width, height, band);
  const out = new Uint8Array(alpha.length);
  for (let i = 0; i < alpha.length; i++) out[i] = alpha[i]! >= 128 && inside[i]! < 0.9999 ? 1 : 0;
  return out;
}

export function prepareTruth(alpha: Uint8Array, photo: Uint8Array, channels: number, width: number, height: number): Truth {
  const band = Math.max(1, Math.round(0.02 * Math.hypot(width, height)));
  const fgMask = binaryPlane(alpha, (v) => v >= 250);
  const bgMask = binaryPlane(alpha, (v) => v <= 5);
  const near = boxMean(binaryPlane(alpha, (v) => v >= 128), width, height, band);
  const edge = new Uint8Array(alpha.length);
  for (let i = 0; i < alpha.length; i++) edge[i] = near[i]! > 0.0001 && near[i]! < 0.9999 ? 1 : 0;
  const localMean = (mask: Float32Array) => {
    const weight = boxMean(mask, width, height, band);
    return [0, 1, 2].map((c) => {
      const plane = new Float32Array(alpha.length);
      for (let i = 0; i < alpha.length; i++) plane[i] = photo[i * channels + c]! * mask[i]!;
      const mean = boxMean(plane, width, height, band);
      for (let i = 0; i < mean.length; i++) mean[i] = weight[i]! > 0 ? mean[i]! / weight[i]! : Number.NaN;
      return mean;
    });
  };
  return { alpha, width, height, band, inner: innerBand(alpha, width, height, band), edge, foreground: localMean(fgMask), background: localMean(bgMask) };
}

/**
 * Halo: over the ground truth's edge band, the alpha-weighted share of visible cutout pixels whose
 * colour is closer to the local true background than to the local true foreground, in percent of
 * the band. It counts both background kept by too much alpha and background colour left in the
 * partially transparent pixels — what shows as a fringe on a new background.
 */
function haloPercent(truth: Truth, alpha: Uint8Array, rgba: Uint8Array): number {
  let halo = 0;
  let band = 0;
  for (let i = 0; i < alpha.length; i++) {
    if (!truth.edge[i]) continue;
    band++;
    if (alpha[i] === 0) continue;
    let toFg = 0, toBg = 0;
    for (let c = 0; c < 3; c++) {
      const v = rgba[i * 4 + c]!;
      toFg += (v - truth.foreground[c]![i]!) ** 2;
      toBg += (v - truth.background[c]![i]!) ** 2;
    }
    // Where there is no true background nearby (or no foreground), there is nothing to tell apart.
    if (Number.isNaN(toFg) || Number.isNaN(toBg)) continue;
    if (toBg < toFg) halo += alpha[i]! / 255;
  }
  return band === 0 ? 0 : (100 * halo) / band;
}

/** Scores a cutout (RGBA at the truth's size). */
export function score(truth: Truth, rgba: Uint8Array): Scores {
  const n = truth.alpha.length;
  const alpha = new Uint8Array(n);
  for (let i = 0; i < n; i++) alpha[i] = rgba[i * 4 + 3]!;
  let inter = 0, union = 0, abs = 0;
  for (let i = 0; i < n; i++) {
    const a = alpha[i]! >= 128, g = truth.alpha[i]! >= 128;
    if (a && g) inter++;
    if (a || g) union++;
    abs += Math.abs(alpha[i]! - truth.alpha[i]!) / 255;
  }
  const ours = innerBand(alpha, truth.width, truth.height, truth.band);
  let bInter = 0, bUnion = 0;
  for (let i = 0; i < n; i++) {
    if (ours[i] && truth.inner[i]) bInter++;
    if (ours[i] || truth.inner[i]) bUnion++;
  }
  return {
    iou: union === 0 ? 1 : inter / union,
    boundaryIou: bUnion === 0 ? 1 : bInter / bUnion,
    mae: abs / n,
    sad: abs / 1000,
    halo: haloPercent(truth, alpha, rgba),
  };
}

export function mean(rows: Scores[]): Scores {
  const out = { iou: 0, boundaryIou: 0, mae: 0, sad: 0, halo: 0 };
  for (const row of rows) for (const k of metricNames) out[k] += row[k] / rows.length;
  return out;
}

/** Mean absolute difference of two RGBA cutouts' alpha, in levels of 0–255. */
export function alphaDistance(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) throw new Error(`cutouts of ${a.length / 4} and ${b.length / 4} pixels`);
  let sum = 0;
  for (let i = 3; i < a.length; i += 4) sum += Math.abs(a[i]! - b[i]!);
  return sum / (a.length / 4);
}
