// Building and running the onnxruntime session (inside the inference thread).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import * as ort from 'onnxruntime-node';
import { quantiseGraph, type Int8Options } from './int8-graph.ts';
import { rangesFile, readRanges } from './int8-ranges.ts';
import { editGraph } from './model-graph.ts';
import { isModelSide, largestSide, sideStep } from './model-sides.ts';
import { modelWeightsIdentity, readModelWeights } from './model-weights.ts';
import { loadOptimizedModel } from './optimized-model.ts';

export interface SegmenterOptions {
  /** Intra-op threads for each inference. */
  threads: number;
  /**
   * Folder for the graph that onnxruntime optimised on the first start, read back on later starts
   * instead of optimising again. Without it every start optimises the shipped graph.
   */
  cacheDir?: string;
  /**
   * `int8` (the product, see below) or `fp32`: the edited graph before quantisation, the same
   * arithmetic as the peer's session; the quality benchmark's baseline runs on it.
   */
  graph?: 'int8' | 'fp32';
}

/** The session settings every inference in this process runs with (the benches use them too). */
export function sessionOptions({ threads }: SegmenterOptions): ort.InferenceSession.SessionOptions {
  if (!Number.isInteger(threads) || threads < 1) throw new Error(`inference threads must be a positive integer, got ${threads}`);
  return {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    // One graph runs at a time; the worker's slots overlap downloads and encoding with it instead.
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // Measured: without memory patterns peak RSS is ~1.3 GB instead of 2.3 GB at the same speed.
    // The CPU arena stays on: off, the peak was higher and the time worse.
    enableMemPattern: false,
    // onnxruntime's threads spin for more work after a run by default, and on two cores that spinning
    // took CPU from the refinement that follows each run: stopped when a run ends, started again by
    // the next one.
    extra: { session: { force_spinning_stop: '1' } },
  };
}

/** What the session runs instead of the shipped graph (see editGraph); part of the saved graph's name. */
const graphEdits = { output: 'output', float32: true, anySide: true } as const;

/**
 * The edited graph in static INT8 (see int8-graph.ts), with the activation ranges `npm run calibrate`
 * measured on the fixtures. `npm run bench:inference -- --int8`: 2.8× faster per pass than fp32 in
 * alternating passes, mean IoU 0.9186 vs 0.9180 and MAE 0.0200 vs 0.0201 on the 14 fixtures. The
 * percentile ranges, not min/max: a few activations reach 30–40× their 99.99th percentile on one
 * photo, and ranges that wide leave too few levels for everything else (mean IoU 0.54). Weights over
 * ±127 on every CPU: without VNNI onnxruntime's u8×s8 multiply can saturate (int8-cpu.ts), yet on
 * such a CPU (Zen 3) `npm run bench:inference -- --int8` measured ±63 weights worse on the fixtures
 * (mean IoU 0.9178 vs 0.9196, MAE 0.0203 vs 0.0195) than ±127 with whatever saturation it meets.
 * The RGB bytes as the input: the same masks, and a pass with its input's conversion 1.027× faster
 * than from normalised planes (`npm run bench:inference -- --int8` on Zen 5, passes alternating).
 * Each Concat's tensors over one shared range, so that QLinearConcat copies bytes instead of
 * requantising them: passes about 5% shorter on Zen 4, 8% on Zen 5 and 4% on Zen 3 (`npm run
 * bench:inference -- --quick --concat`). On Zen 3, whose multiply saturates (int8-cpu.ts), they cost
 * `standard` 0.0007 of mean IoU against each tensor's own ranges on `npm run bench:quality`, and gave
 * `high` 0.0016 of boundary IoU; both lie well above the baseline, what the peer does (README,
 * "Measured on Zen 3 at stop 51"). From stop 37 to stop 50 each tensor kept its own ranges there, a
 * choice made against the benchmark's baseline before stop 44, which `standard` with shared ranges
 * fell 0.0001 under.
 */
export const productInt8 = { activations: 'uint8', range: 'percentile', weightLimit: 127, concatRanges: 'shared', input: 'bytes' } as const satisfies Int8Options;

/**
 * Whether the graph takes the model's input as the RGB bytes themselves (the INT8 graph: Int8Options
 * `input`) or as normalised float planes (the fp32 graph, rgbToTensor).
 */
export function takesBytes(graph: SegmenterOptions['graph'] = 'int8'): boolean {
  return graph === 'int8' && productInt8.input === 'bytes';
}

async function buildGraph(graph: 'int8' | 'fp32'): Promise<Uint8Array> {
  const edited = editGraph(await readModelWeights(), graphEdits);
  return graph === 'fp32' ? edited : quantiseGraph(edited, readRanges(), productInt8);
}

/** Changes with the weights, the edits and, for INT8, the ranges file's content. */
async function graphIdentity(graph: 'int8' | 'fp32'): Promise<string> {
  const weights = `${await modelWeightsIdentity()}:${JSON.stringify(graphEdits)}`;
  if (graph === 'fp32') return weights;
  const ranges = createHash('sha256').update(fs.readFileSync(rangesFile)).digest('hex');
  return `${weights}:${JSON.stringify(productInt8)}:${ranges}`;
}

export async function createSession(options: SegmenterOptions): Promise<ort.InferenceSession> {
  const settings = sessionOptions(options);
  const graph = options.graph ?? 'int8';
  return options.cacheDir
    ? loadOptimizedModel(options.cacheDir, settings, { identity: await graphIdentity(graph), build: () => buildGraph(graph) })
    : ort.InferenceSession.create(await buildGraph(graph), settings);
}

/**
 * One run on side² pixels: interleaved RGB bytes for a graph that takes bytes (takesBytes), else
 * normalised planes (rgbToTensor).
 */
export async function runSession(session: ort.InferenceSession, input: Uint8Array | Float32Array, side: number): Promise<Float32Array> {
  if (!isModelSide(side)) throw new Error(`the model takes sides that are multiples of ${sideStep} up to ${largestSide}, not ${side}`);
  if (input.length !== 3 * side * side) throw new Error(`model input must have ${3 * side * side} values, got ${input.length}`);
  const tensor = input instanceof Uint8Array ? new ort.Tensor('uint8', input, [1, side, side, 3]) : new ort.Tensor('float32', input, [1, 3, side, side]);
  const result = await session.run({ input: tensor }, ['output']);
  const mask = result.output?.data;
  if (!(mask instanceof Float32Array) || mask.length !== side * side) throw new Error('model returned no float mask');
  return mask;
}
