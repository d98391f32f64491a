// The segmentation session: created once per process and shared by every removal.
import * as ort from 'onnxruntime-node';
import { loadOptimizedModel } from './optimized-model.ts';
import { editGraph } from './model-graph.ts';
import { modelWeightsIdentity, readModelWeights } from './model-weights.ts';

/** The model's fixed input side: it sees every image stretched to this square. */
export const modelSize = 1024;

export interface Segmenter {
  /**
   * Foreground probability in [0, 1] for each pixel of a modelSize² image, row-major, from the
   * image as a normalised CHW float tensor of 3 × modelSize². Runs off the JS thread.
   */
  predict(input: Float32Array): Promise<Float32Array>;
}

export interface SegmenterOptions {
  /** Intra-op threads for each inference. */
  threads: number;
  /**
   * Folder for the graph that onnxruntime optimised on the first start, read back on later starts
   * instead of optimising again. Without it every start optimises the shipped graph.
   */
  cacheDir?: string;
}

let loading: Promise<Segmenter> | undefined;

/**
 * The process-wide segmenter. The first call's options decide how it is built; later calls,
 * concurrent ones included, share that same session (the model holds ~1 GB of memory when running).
 */
export function loadSegmenter(options: SegmenterOptions): Promise<Segmenter> {
  loading ??= createSegmenter(options).catch((err: unknown) => {
    loading = undefined; // let a later call retry instead of caching the failure forever
    throw err;
  });
  return loading;
}

/** The session settings every inference in this process runs with (the benches use them too). */
export function sessionOptions({ threads }: SegmenterOptions): ort.InferenceSession.SessionOptions {
  if (!Number.isInteger(threads) || threads < 1) throw new Error(`inference threads must be a positive integer, got ${threads}`);
  return {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    // One graph runs at a time per inference; parallel tasks come from the worker's slots instead.
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // Measured: without memory patterns peak RSS is ~1.3 GB instead of 2.3 GB at the same speed.
    // The CPU arena stays on: turning it off doubled the inference time.
    enableMemPattern: false,
  };
}

/** What the session runs instead of the shipped graph (see editGraph); part of the saved graph's name. */
const graphEdits = { output: 'output', float32: true } as const;

async function buildGraph(): Promise<Uint8Array> {
  return editGraph(await readModelWeights(), graphEdits);
}

async function createSegmenter(options: SegmenterOptions): Promise<Segmenter> {
  const settings = sessionOptions(options);
  const session = options.cacheDir
    ? await loadOptimizedModel(options.cacheDir, settings, { identity: `${await modelWeightsIdentity()}:${JSON.stringify(graphEdits)}`, build: buildGraph })
    : await ort.InferenceSession.create(await buildGraph(), settings);
  return {
    async predict(input) {
      if (input.length !== 3 * modelSize * modelSize) throw new Error(`model input must have ${3 * modelSize * modelSize} values, got ${input.length}`);
      const result = await session.run({ input: new ort.Tensor('float32', input, [1, 3, modelSize, modelSize]) }, ['output']);
      const mask = result.output?.data;
      if (!(mask instanceof Float32Array) || mask.length !== modelSize * modelSize) throw new Error('model returned no float mask');
      return mask;
    },
  };
}
