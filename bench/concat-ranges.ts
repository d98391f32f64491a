// The product's INT8 graph with each Concat's tensors over their own ranges (before) and over one
// shared range (the product: int8-graph.ts, Int8Options `concatRanges`), for `npm run
// bench:inference -- --int8`. Passes alternate, the one going first changing from pass to pass, at
// both sides the product runs (`standard`'s and `high`'s mirrored view), so that a changing load
// slows both alike; the table also counts the pairs in which the shared ranges were faster.
import * as ort from 'onnxruntime-node';
import { quantiseGraph } from '../src/vision/int8-graph.ts';
import { readRanges } from '../src/vision/int8-ranges.ts';
import { productInt8 } from '../src/vision/model-session.ts';
import { fixed, median } from './stats.ts';

/** Rows of side, passes, median ms with own and with shared ranges, speed-up, and pairs the shared won; `photos` gives each side's RGB bytes. */
export async function concatRangeTimes(fp32: Uint8Array, photos: Map<number, Uint8Array[]>, rounds: number, options: ort.InferenceSession.SessionOptions): Promise<string[][]> {
  const ranges = readRanges();
  const own = await ort.InferenceSession.create(quantiseGraph(fp32, ranges, { ...productInt8, concatRanges: 'own' }), options);
  const shared = await ort.InferenceSession.create(quantiseGraph(fp32, ranges, { ...productInt8, concatRanges: 'shared' }), options);
  const timed = async (session: ort.InferenceSession, input: ort.Tensor) => {
    const started = performance.now();
    await session.run({ input }, ['output']);
    return performance.now() - started;
  };
  const rows: string[][] = [];
  try {
    for (const [side, inputs] of photos) {
      const times = { own: [] as number[], shared: [] as number[] };
      const tensors = inputs.map((photo) => new ort.Tensor('uint8', photo, [1, side, side, 3]));
      // The first pass at a side grows each session's buffers: not measured.
      for (const session of [own, shared]) await session.run({ input: tensors[0]! }, ['output']);
      for (let round = 0; round < rounds; round++) {
        for (const [i, tensor] of tensors.entries()) {
          const ownFirst = (round + i) % 2 === 0;
          if (ownFirst) times.own.push(await timed(own, tensor));
          times.shared.push(await timed(shared, tensor));
          if (!ownFirst) times.own.push(await timed(own, tensor));
        }
      }
      const won = times.shared.filter((t, i) => t < times.own[i]!).length;
      rows.push([String(side), String(times.own.length), fixed(median(times.own), 1), fixed(median(times.shared), 1), fixed(median(times.own) / median(times.shared), 3), `${won} of ${times.own.length}`]);
    }
  } finally {
    await own.release();
    await shared.release();
  }
  return rows;
}
