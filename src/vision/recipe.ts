// What `precision` and `subject` change in the pipeline. Every value here was chosen on the quality
// benchmark (`npm run bench:quality`); see the README for the measurements behind each.
import type { Precision, Subject } from '../domain/removal-request.ts';
import type { Geometry } from './preprocess.ts';

export interface Pass {
  geometry: Geometry;
  /** Run on the left-right mirrored image and mirror the mask back. */
  mirrored: boolean;
  /** Run on the subject's bounding box (from the passes before, with a margin) instead of the whole image: a second, closer scale. */
  zoom?: boolean;
  /** How much the pass counts where passes are combined (1 when left out). */
  weight?: number;
  /** The side of the model's square input for this pass (modelSize when left out; see isModelSide). */
  side?: number;
}

export interface Recipe {
  /** Model passes whose masks are combined: their log-odds averaged with the passes' weights. */
  passes: Pass[];
  /** Guided-filter window radius as a fraction of the working image's long side, and its regulariser; null: plain bilinear upsampling. */
  refine: { radius: number; epsilon: number } | null;
  /** Slope of the alpha curve: above 1 makes edges crisper. */
  contrast: number;
  /** The mask value the curve maps to ½. */
  centre: number;
  /** Re-estimate the colours of semi-transparent pixels (blur fusion). */
  decontaminate: boolean;
  /**
   * Longest side of the working resolution, where the mask is combined and refined and the colour
   * fields are made before the result is applied at full size (a smaller photo is worked on at its own size).
   */
  workingSide: number;
}

/**
 * The side of `high`'s mirrored view (a multiple of 64, isModelSide). `npm run bench:quality --
 * --variants high-flip1088,high-flip1216,high-flip1280` measures the sides around it.
 */
export const highSecondSide = 1152;

/**
 * Every recipe's working side (Recipe.workingSide). `npm run bench:quality -- --variants
 * std-ws768,high-ws768,std-ws512,high-ws512` measures it against 768 (the side before) and 512, on
 * the fixtures as they are and, with `--upscale 2.5` or `--upscale 5`, enlarged to 0.5–10.5 MP.
 */
export const workingSide = 640;

export function recipeFor(subject: Subject, precision: Precision, width: number, height: number): Recipe {
  void width;
  void height;
  const stretch: Pass = { geometry: 'stretch', mirrored: false };
  // `high`: a second view, mirrored and at a larger scale (the model's input at 1152 instead of
  // 1024), combined with the upright view at equal weight. The model is not mirror-symmetric and
  // sees edges differently at another scale, so the two views err in different places; the
  // combination is softer where they disagree, so its alpha curve is steeper than for one pass.
  const passes = precision === 'standard' ? [stretch] : [stretch, { ...stretch, mirrored: true, side: highSecondSide }];
  const high = precision === 'high';
  switch (subject) {
    // Soft matting: no steepening (it cut fine strands), and a wider window that follows strands.
    case 'hair':
      return { passes, refine: { radius: 0.01, epsilon: 1e-3 }, contrast: 1, centre: 0.5, decontaminate: true, workingSide };
    // Crisp, whole objects: steeper, and the edge moved slightly outwards (the model's ½ falls inside products' true edges).
    case 'product':
      return { passes, refine: { radius: 0.005, epsilon: 1e-3 }, contrast: high ? 4 : 3, centre: 0.45, decontaminate: true, workingSide };
    // No portrait fixtures to tune on: a portrait gets the balanced default.
    case 'portrait':
    case 'auto':
      return { passes, refine: { radius: 0.005, epsilon: 1e-3 }, contrast: high ? 4 : 2, centre: 0.5, decontaminate: true, workingSide };
  }
}

/** Lookup table from q·1024 (q the refined mask in [0, 1]) to the alpha byte, through the contrast curve. */
export function alphaCurve(contrast: number, centre = 0.5): Uint8Array {
  const table = new Uint8Array(1025);
  for (let i = 0; i <= 1024; i++) {
    const v = (i / 1024 - centre) * contrast + 0.5;
    table[i] = Math.round(Math.min(1, Math.max(0, v)) * 255);
  }
  return table;
}
