// Measures the activation ranges of the fp32 graph on images, for the INT8 graph's parameters:
// every activation is exposed as an extra graph output and summarised per tensor over all images.
import fs from 'node:fs';
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';
import { loadConfig } from '../src/config.ts';
import { decodeImage } from '../src/vision/decode.ts';
import { calibrationTensors, withoutNoOpCasts } from '../src/vision/int8-graph.ts';
import type { ActivationRanges, TensorRange } from '../src/vision/int8-ranges.ts';
import { sessionOptions } from '../src/vision/model-session.ts';
import { modelSize } from '../src/vision/model-sides.ts';
import { rgbToTensor, toModelInput } from '../src/vision/preprocess.ts';

const { onnx } = onnxProto;

/** Cuts the 0.01 % most extreme values on each side; the bench compares it with the full range. */
export const calibrationPercentile = 99.99;

/** Bins of |x| by float exponent and the top 6 mantissa bits: 1/64 octave wide, any magnitude. */
const bins = 1 << 14;
const binShift = 17;

class Histogram {
  positive = new Float64Array(bins);
  negative = new Float64Array(bins);
  min = Infinity;
  max = -Infinity;
  count = 0;

  add(values: Float32Array): void {
    const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
    const { positive, negative } = this;
    let min = this.min;
    let max = this.max;
    for (let i = 0; i < values.length; i++) {
      const b = bits[i]!;
      if (b >>> 31) negative[(b >>> binShift) & (bins - 1)]!++;
      else positive[b >>> binShift]!++;
      const v = values[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    this.min = min;
    this.max = max;
    this.count += values.length;
  }

  /** The value below which a fraction `q` of everything seen lies, to the bin edge farther from zero on the bin's own side. */
  quantile(q: number, upper: boolean): number {
    const target = q * this.count;
    let seen = 0;
    for (let k = bins - 1; k >= 0; k--) {
      seen += this.negative[k]!;
      if (seen >= target) return this.clamp(-edge(upper ? k : k + 1));
    }
    for (let k = 0; k < bins; k++) {
      seen += this.positive[k]!;
      if (seen >= target) return this.clamp(edge(upper ? k + 1 : k));
    }
    return this.max;
  }

  private clamp(v: number): number {
    return Math.min(this.max, Math.max(this.min, v));
  }

  range(percentile: number): TensorRange {
    const tail = 1 - percentile / 100;
    return { min: this.min, max: this.max, low: this.quantile(tail, false), high: this.quantile(1 - tail, true) };
  }
}

/** The smallest magnitude in bin `k`. */
function edge(k: number): number {
  return new Float32Array(new Uint32Array([Math.min(k, bins - 1) * 2 ** binShift]).buffer)[0]!;
}

/** The fp32 graph with every activation the quantiser may need as a graph output. */
export function calibrationGraph(fp32: Uint8Array): { model: Uint8Array; tensors: string[] } {
  const proto = onnx.ModelProto.decode(fp32);
  const graph = proto.graph!;
  withoutNoOpCasts(graph);
  const tensors = calibrationTensors(graph);
  graph.output = [...graph.output!, ...tensors.map((name) => ({ name, type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT } } }))];
  return { model: onnx.ModelProto.encode(proto).finish(), tensors };
}

/**
 * Ranges over `images` (files), each preprocessed exactly as the product does (decoded, stretched
 * to the model's square). The extra outputs hold every activation of a pass at once (~2 GB), so
 * they are fetched a group at a time and each pass computes only what its group needs.
 */
export async function calibrate(fp32: Uint8Array, images: { name: string; file: string }[], percentile: number, threads: number): Promise<ActivationRanges> {
  const { model, tensors } = calibrationGraph(fp32);
  const session = await ort.InferenceSession.create(model, sessionOptions({ threads }));
  const histograms = new Map(tensors.map((name) => [name, new Histogram()]));
  const groups = 4;
  try {
    for (const image of images) {
      const decoded = await decodeImage(fs.readFileSync(image.file), loadConfig({}).maxPixels);
      const { rgb } = await toModelInput(decoded, 'stretch');
      const feeds = { input: new ort.Tensor('float32', rgbToTensor(rgb), [1, 3, modelSize, modelSize]) };
      for (let g = 0; g < groups; g++) {
        const fetch = tensors.filter((_, i) => i % groups === g);
        const out = await session.run(feeds, fetch);
        for (const name of fetch) histograms.get(name)!.add(out[name]!.data as Float32Array);
      }
    }
  } finally {
    await session.release();
  }
  return {
    percentile,
    images: images.map((i) => i.name),
    tensors: Object.fromEntries(tensors.map((name) => [name, histograms.get(name)!.range(percentile)])),
  };
}
