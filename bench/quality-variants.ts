// The recipes the quality benchmark compares: the shipped ones, and alternatives kept so the
// measurements behind each decision can be re-run (`--variants name,…`).
import type { Precision, Subject } from '../src/domain/removal-request.ts';
import { recipeFor, type Recipe } from '../src/vision/recipe.ts';

export interface Variant {
  label: string;
  recipe: (width: number, height: number) => Recipe;
}

export function shipped(subject: Subject, precision: Precision): Variant {
  return { label: `${precision}${subject === 'auto' ? '' : `/${subject}`}`, recipe: (w, h) => recipeFor(subject, precision, w, h) };
}

function tweak(label: string, subject: Subject, precision: Precision, change: Partial<Recipe>): Variant {
  return { label, recipe: (w, h) => ({ ...recipeFor(subject, precision, w, h), ...change }) };
}

const stretch = { geometry: 'stretch', mirrored: false } as const;
const stretchFlip = { geometry: 'stretch', mirrored: true } as const;
const pad = { geometry: 'pad', mirrored: false } as const;
const padFlip = { geometry: 'pad', mirrored: true } as const;

export const experiments: Record<string, Variant> = {
  'std-raw': tweak('std-raw', 'auto', 'standard', { refine: null, contrast: 1, decontaminate: false }),
  'std-norefine': tweak('std-norefine', 'auto', 'standard', { refine: null }),
  'std-pad': tweak('std-pad', 'auto', 'standard', { passes: [pad] }),
  'std-stretch': tweak('std-stretch', 'auto', 'standard', { passes: [stretch] }),
  'std-nodecon': tweak('std-nodecon', 'auto', 'standard', { decontaminate: false }),
  'high-flip': tweak('high-flip', 'auto', 'high', { passes: [stretch, stretchFlip] }),
  'high-padflip': tweak('high-padflip', 'auto', 'high', { passes: [stretch, padFlip] }),
  'high-pad': tweak('high-pad', 'auto', 'high', { passes: [stretch, pad] }),
  'high-4': tweak('high-4', 'auto', 'high', { passes: [stretch, stretchFlip, pad, padFlip] }),
  'high-3': tweak('high-3', 'auto', 'high', { passes: [stretch, stretchFlip, padFlip] }),
};

for (const contrast of [1, 1.25, 1.5, 2, 3]) {
  experiments[`std-c${contrast}`] = tweak(`std-c${contrast}`, 'auto', 'standard', { contrast });
}
for (const radius of [0.0025, 0.005, 0.01, 0.02]) {
  for (const epsilon of [1e-4, 1e-3, 1e-2, 1e-1]) {
    const name = `std-r${radius}-e${epsilon}`;
    experiments[name] = tweak(name, 'auto', 'standard', { refine: { radius, epsilon } });
  }
}
