// What `precision` and `subject` change in the pipeline. Every value here was chosen on the quality
// benchmark (`npm run bench:quality`); see the README for the measurements behind each.
import type { Precision, Subject } from '../domain/removal-request.ts';
import type { Geometry } from './preprocess.ts';

export interface Pass {
  geometry: Geometry;
  /** Run on the left-right mirrored image and mirror the mask back. */
  mirrored: boolean;
}

export interface Recipe {
  /** Model passes whose masks are averaged. */
  passes: Pass[];
  /** Guided-filter window radius as a fraction of the working image's long side, and its regulariser; null: plain bilinear upsampling. */
  refine: { radius: number; epsilon: number } | null;
  /** Slope of the alpha curve around ½: above 1 makes edges crisper. */
  contrast: number;
  /** Re-estimate the colours of semi-transparent pixels (blur fusion). */
  decontaminate: boolean;
}

/** Longest side of the working resolution, where the mask is refined before the result is applied at full size. */
export const workingSide = 1024;

export function recipeFor(subject: Subject, precision: Precision, width: number, height: number): Recipe {
  const geometry: Geometry = 'stretch';
  void width;
  void height;
  const passes: Pass[] = precision === 'standard'
    ? [{ geometry, mirrored: false }]
    : [{ geometry, mirrored: false }, { geometry, mirrored: true }];
  void subject;
  return { passes, refine: { radius: 0.005, epsilon: 1e-3 }, contrast: 1, decontaminate: true };
}

/** Lookup table from q·1024 (q the refined mask in [0, 1]) to the alpha byte, through the contrast curve. */
export function alphaCurve(contrast: number): Uint8Array {
  const table = new Uint8Array(1025);
  for (let i = 0; i <= 1024; i++) {
    const v = (i / 1024 - 0.5) * contrast + 0.5;
    table[i] = Math.round(Math.min(1, Math.max(0, v)) * 255);
  }
  return table;
}
