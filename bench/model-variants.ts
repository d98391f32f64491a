// One row of the inference experiments (`npm run bench:inference`).
import type * as ort from 'onnxruntime-node';

/** One row of `npm run bench:inference`. */
export interface Variant {
  name: string;
  /** The model's input side (the product graph takes any multiple of 64, model-graph.ts). */
  side: number;
  model: () => Promise<Uint8Array | string>;
  options?: ort.InferenceSession.SessionOptions;
  /** The fixtures (by name) it is scored on; all of them when absent. */
  fixtures?: string[];
}
