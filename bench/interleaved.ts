// Speed of graphs under the same load: their passes alternate on the same inputs, so a load that
// changes during the run (other benches sharing the 2 cores) slows each of them alike, which
// variants run one after another do not get.
import * as ort from 'onnxruntime-node';
import type { Variant } from './model-variants.ts';
import { fixed, median } from './stats.ts';

/** Rows of variant, median ms and speed-up over the first variant, from `rounds` passes over every input. */
export async function interleavedTimes(variants: Variant[], inputs: Float32Array[], rounds: number, options: ort.InferenceSession.SessionOptions): Promise<string[][]> {
  const sessions: ort.InferenceSession[] = [];
  for (const variant of variants) sessions.push(await ort.InferenceSession.create((await variant.model()) as Uint8Array, { ...options, ...variant.options }));
  const times = variants.map((): number[] => []);
  try {
    for (let round = 0; round < rounds; round++) {
      for (const input of inputs) {
        for (const [i, session] of sessions.entries()) {
          const side = variants[i]!.side;
          const feeds = { [session.inputNames[0]!]: new ort.Tensor('float32', input, [1, 3, side, side]) };
          const started = performance.now();
          await session.run(feeds, ['output']);
          times[i]!.push(performance.now() - started);
        }
      }
    }
  } finally {
    for (const session of sessions) await session.release();
  }
  const medians = times.map((t) => median(t));
  return variants.map((v, i) => [v.name, String(times[i]!.length), fixed(medians[i]!), fixed(medians[0]! / medians[i]!, 2)]);
}
