// The input sides the model takes. Apart from model-session.ts so that the main thread, which makes
// the model's inputs and reads its masks, does not load onnxruntime and the graph tooling: only the
// inference thread needs them, and on the main thread their code and data would sit in the heap that
// each of its full garbage collections marks.

/** The model's input side unless a recipe's pass asks for another: it sees every image stretched to a square. */
export const modelSize = 1024;

/**
 * The input sides the graph takes after the anySide edit (model-graph.ts): ISNet halves its feature
 * maps six times (max pooling, rounding up) and doubles them back, so a side that is not a multiple
 * of 2⁶ would leave a doubled map one pixel off the map it is joined with.
 */
export const sideStep = 64;

/** The largest input side a pass may ask for: a pass's memory grows with the square of its side. */
export const largestSide = 2048;

/** Whether the session takes a square input of `side` pixels. */
export function isModelSide(side: number): boolean {
  return Number.isInteger(side) && side > 0 && side <= largestSide && side % sideStep === 0;
}
