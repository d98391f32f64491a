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
  'std-norefine-c2': tweak('std-norefine-c2', 'auto', 'standard', { refine: null, contrast: 2 }),
  'high-flip-c2': tweak('high-flip-c2', 'auto', 'high', { passes: [stretch, stretchFlip], contrast: 2 }),
  'high-flip-c3': tweak('high-flip-c3', 'auto', 'high', { passes: [stretch, stretchFlip], contrast: 3 }),
  'high-zoom-c2': tweak('high-zoom-c2', 'auto', 'high', { passes: [stretch, { ...stretch, zoom: true }], contrast: 2 }),
  'high-zoomflip-c2': tweak('high-zoomflip-c2', 'auto', 'high', { passes: [stretch, { ...stretchFlip, zoom: true }], contrast: 2 }),
  'high-zoomflip-c3': tweak('high-zoomflip-c3', 'auto', 'high', { passes: [stretch, { ...stretchFlip, zoom: true }], contrast: 3 }),
  'high-flip-c4': tweak('high-flip-c4', 'auto', 'high', { passes: [stretch, stretchFlip], contrast: 4 }),
  'high-t0.4': tweak('high-t0.4', 'auto', 'high', { centre: 0.4 }),
  'high-t0.6': tweak('high-t0.6', 'auto', 'high', { centre: 0.6 }),
  'std-t0.4': tweak('std-t0.4', 'auto', 'standard', { centre: 0.4 }),
  'std-t0.6': tweak('std-t0.6', 'auto', 'standard', { centre: 0.6 }),
  'product-std-c2': tweak('product-std-c2', 'product', 'standard', { contrast: 2 }),
  'product-high-c3': tweak('product-high-c3', 'product', 'high', { contrast: 3 }),
  'high-t0.45': tweak('high-t0.45', 'auto', 'high', { centre: 0.45 }),
  'std-t0.45': tweak('std-t0.45', 'auto', 'standard', { centre: 0.45 }),
  'product-std-t0.4': tweak('product-std-t0.4', 'product', 'standard', { centre: 0.4 }),
  'product-high-t0.4': tweak('product-high-t0.4', 'product', 'high', { centre: 0.4 }),
  'product-std-t0.45': tweak('product-std-t0.45', 'product', 'standard', { centre: 0.45 }),
  'product-high-t0.45': tweak('product-high-t0.45', 'product', 'high', { centre: 0.45 }),
  'hair-high-c1.5': tweak('hair-high-c1.5', 'hair', 'high', { contrast: 1.5 }),
  'hair-std-c2': tweak('hair-std-c2', 'hair', 'standard', { contrast: 2 }),
  'hair-std-r0.005': tweak('hair-std-r0.005', 'hair', 'standard', { refine: { radius: 0.005, epsilon: 1e-3 } }),
  // The mirrored view's input side (shipped: 1152, equal weights); the high recipe before it
  // (mirrored view at 1024, counting half the upright one); and the side at other weights.
  'high-flip1024-w2:1': tweak('high-flip1024-w2:1', 'auto', 'high', { passes: [{ ...stretch, weight: 2 }, stretchFlip] }),
  'high-flip960': tweak('high-flip960', 'auto', 'high', { passes: [stretch, { ...stretchFlip, side: 960 }] }),
  'high-flip1088': tweak('high-flip1088', 'auto', 'high', { passes: [stretch, { ...stretchFlip, side: 1088 }] }),
  'high-flip1216': tweak('high-flip1216', 'auto', 'high', { passes: [stretch, { ...stretchFlip, side: 1216 }] }),
  'high-flip1280': tweak('high-flip1280', 'auto', 'high', { passes: [stretch, { ...stretchFlip, side: 1280 }] }),
  'high-flip1152-w2:1': tweak('high-flip1152-w2:1', 'auto', 'high', { passes: [{ ...stretch, weight: 2 }, { ...stretchFlip, side: 1152 }] }),
  'high-up1152': tweak('high-up1152', 'auto', 'high', { passes: [stretch, { ...stretch, side: 1152 }] }),
  // Around the shipped high (mirrored view at 1152): its alpha curve's centre, the guided filter's
  // radius and ε, the upright view's side, a third view, and the mirrored view padded.
  'high-t0.55': tweak('high-t0.55', 'auto', 'high', { centre: 0.55 }),
  'high-r0.0035': tweak('high-r0.0035', 'auto', 'high', { refine: { radius: 0.0035, epsilon: 1e-3 } }),
  'high-r0.0075': tweak('high-r0.0075', 'auto', 'high', { refine: { radius: 0.0075, epsilon: 1e-3 } }),
  'high-e1e-2': tweak('high-e1e-2', 'auto', 'high', { refine: { radius: 0.005, epsilon: 1e-2 } }),
  'high-e1e-4': tweak('high-e1e-4', 'auto', 'high', { refine: { radius: 0.005, epsilon: 1e-4 } }),
  'high-up960-flip1152': tweak('high-up960-flip1152', 'auto', 'high', { passes: [{ ...stretch, side: 960 }, { ...stretchFlip, side: 1152 }] }),
  'high-up1088-flip1152': tweak('high-up1088-flip1152', 'auto', 'high', { passes: [{ ...stretch, side: 1088 }, { ...stretchFlip, side: 1152 }] }),
  'high-up896-flip1216': tweak('high-up896-flip1216', 'auto', 'high', { passes: [{ ...stretch, side: 896 }, { ...stretchFlip, side: 1216 }] }),
  'high-3views': tweak('high-3views', 'auto', 'high', { passes: [stretch, { ...stretchFlip, side: 1152 }, { ...stretch, side: 1280 }] }),
  'high-padflip1152': tweak('high-padflip1152', 'auto', 'high', { passes: [stretch, { ...padFlip, side: 1152 }] }),
  // Around high with the working side at 640: its curve's slope, no refinement, the mirrored view
  // counting twice, both views at 1152, the roles of the two sides swapped, and third views.
  'high-c3': tweak('high-c3', 'auto', 'high', { contrast: 3 }),
  'high-c6': tweak('high-c6', 'auto', 'high', { contrast: 6 }),
  'high-norefine': tweak('high-norefine', 'auto', 'high', { refine: null }),
  'high-flip1152-w1:2': tweak('high-flip1152-w1:2', 'auto', 'high', { passes: [stretch, { ...stretchFlip, side: 1152, weight: 2 }] }),
  'high-up1152-flip1152': tweak('high-up1152-flip1152', 'auto', 'high', { passes: [{ ...stretch, side: 1152 }, { ...stretchFlip, side: 1152 }] }),
  'high-flip1024-up1152': tweak('high-flip1024-up1152', 'auto', 'high', { passes: [stretchFlip, { ...stretch, side: 1152 }] }),
  'high-up896-flip1152': tweak('high-up896-flip1152', 'auto', 'high', { passes: [{ ...stretch, side: 896 }, { ...stretchFlip, side: 1152 }] }),
  'high-3views-up896': tweak('high-3views-up896', 'auto', 'high', { passes: [stretch, { ...stretchFlip, side: 1152 }, { ...stretch, side: 896 }] }),
  'high-3views-flip1024': tweak('high-3views-flip1024', 'auto', 'high', { passes: [stretch, { ...stretchFlip, side: 1152 }, stretchFlip] }),
  'high-3views-pad1024': tweak('high-3views-pad1024', 'auto', 'high', { passes: [stretch, { ...stretchFlip, side: 1152 }, pad] }),
  // The working side (shipped: 640): 768, the side before, and 512.
  'std-ws768': tweak('std-ws768', 'auto', 'standard', { workingSide: 768 }),
  'high-ws768': tweak('high-ws768', 'auto', 'high', { workingSide: 768 }),
  'std-ws512': tweak('std-ws512', 'auto', 'standard', { workingSide: 512 }),
  'high-ws512': tweak('high-ws512', 'auto', 'high', { workingSide: 512 }),
  // How much the mirrored view counts against the upright one at the same side (1 to 2 before 1152).
  'high-w1:1': tweak('high-w1:1', 'auto', 'high', { passes: [stretch, stretchFlip] }),
  'high-w1:3': tweak('high-w1:3', 'auto', 'high', { passes: [{ ...stretch, weight: 3 }, stretchFlip] }),
  'high-w2:3': tweak('high-w2:3', 'auto', 'high', { passes: [{ ...stretch, weight: 3 }, { ...stretchFlip, weight: 2 }] }),
};

for (const contrast of [1, 1.25, 1.5, 2, 3]) {
  experiments[`std-c${contrast}`] = tweak(`std-c${contrast}`, 'auto', 'standard', { contrast });
}
for (const radius of [0.0025, 0.005, 0.01, 0.02]) {
  for (const epsilon of [1e-4, 1e-3, 1e-2, 1e-1]) {
    const name = `std-c2-r${radius}-e${epsilon}`;
    experiments[name] = tweak(name, 'auto', 'standard', { refine: { radius, epsilon }, contrast: 2 });
  }
}
