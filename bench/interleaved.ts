// Speed of graphs under the same load: their passes alternate on the same inputs, so a load that
// changes during the run (other benches sharing the 2 cores) slows each of them alike, which
// variants run one after another do not get. The variant that goes first changes from pass to pass.
import * as ort from 'onnxruntime-node';
import type { Variant } from './model-variants.ts';
import { fixed, median } from './stats.ts';

/** Normalised planes (1×3×side×side), or the RGB bytes (1×side×side×3) of a graph that takes bytes (int8-graph.ts, Int8Options `input`). */
export type ModelInput = Float32Array | Uint8Array;

/**
 * Rows of variant, passes, median ms, speed-up over the first variant and the passes in which it
 * was faster than the first on the same input, from `rounds` passes over every input.
 */
export async function interleavedTimes(variants: Variant[], inputs: ModelInput[], rounds: number, options: ort.InferenceSession.SessionOptions): Promise<string[][]> {
  const sessions: ort.InferenceSession[] = [];
  for (const variant of variants) sessions.push(await ort.InferenceSession.create((await variant.model()) as Uint8Array, { ...options, ...variant.options }));
  const times = variants.map((): number[] => []);
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [n, input] of inputs.entries()) {
        for (let k = 0; k < sessions.length; k++) {
          const i = (k + round * inputs.length + n) % sessions.length;
          const session = sessions[i]!;
          const side = variants[i]!.side;
          const tensor = input instanceof Uint8Array ? new ort.Tensor('uint8', input, [1, side, side, 3]) : new ort.Tensor('float32', input, [1, 3, side, side]);
          const started = performance.now();
          await session.run({ [session.inputNames[0]!]: tensor }, ['output']);
          times[i]!.push(performance.now() - started);
        }
      }
    }
  } finally {
    for (const session of sessions) await session.release();
  }
  const medians = times.map((t) => median(t));
  return variants.map((v, i) => {
    const faster = i === 0 ? '–' : `${times[i]!.filter((t, pass) => t < times[0]![pass]!).length} of ${times[i]!.length}`;
    return [v.name, String(times[i]!.length), fixed(medians[i]!), fixed(medians[0]! / medians[i]!, 3), faster];
  });
}
