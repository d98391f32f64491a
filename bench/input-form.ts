// The product's INT8 graph fed the two ways it has been (`npm run bench:inference -- --int8`), passes
// alternating on the same photos so that a changing load slows both alike: normalised float planes,
// which the inference thread made from the bytes before each run (rgbToTensor, timed with the run),
// and the RGB bytes as they are (int8-graph.ts, Int8Options `input`; the run alone). It also checks
// that both give the same mask.
import * as ort from 'onnxruntime-node';
import { quantiseGraph } from '../src/vision/int8-graph.ts';
import { readRanges } from '../src/vision/int8-ranges.ts';
import { productInt8 } from '../src/vision/model-session.ts';
import { rgbToTensor } from '../src/vision/preprocess.ts';
import { fixed, median } from './stats.ts';

/** Rows of input form, passes, median ms (conversion and run) and speed-up over the planes, from `rounds` passes over each of `photos` (side² RGB bytes). */
export async function inputFormTimes(fp32: Uint8Array, photos: Uint8Array[], side: number, rounds: number, options: ort.InferenceSession.SessionOptions): Promise<string[][]> {
  const ranges = readRanges();
  const planes = await ort.InferenceSession.create(quantiseGraph(fp32, ranges, { ...productInt8, input: 'floats' }), options);
  const bytes = await ort.InferenceSession.create(quantiseGraph(fp32, ranges, { ...productInt8, input: 'bytes' }), options);
  const times: [number[], number[]] = [[], []];
  const tensor = new Float32Array(3 * side * side);
  try {
    for (let round = 0; round < rounds; round++) {
      for (const photo of photos) {
        let started = performance.now();
        const fromPlanes = (await planes.run({ input: new ort.Tensor('float32', rgbToTensor(photo, tensor), [1, 3, side, side]) }, ['output'])).output!.data as Float32Array;
        times[0].push(performance.now() - started);
        started = performance.now();
        const fromBytes = (await bytes.run({ input: new ort.Tensor('uint8', photo, [1, side, side, 3]) }, ['output'])).output!.data as Float32Array;
        times[1].push(performance.now() - started);
        if (fromBytes.some((v, i) => v !== fromPlanes[i])) throw new Error('the bytes gave another mask than the planes');
      }
    }
  } finally {
    await planes.release();
    await bytes.release();
  }
  const [first, second] = times.map((t) => median(t)) as [number, number];
  return [
    ['normalised planes (rgbToTensor, then the run)', String(times[0].length), fixed(first, 1), '1.00'],
    ['the RGB bytes as they are (product)', String(times[1].length), fixed(second, 1), fixed(first / second, 3)],
  ];
}
