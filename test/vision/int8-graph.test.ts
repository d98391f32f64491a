// Static INT8 quantisation: the parameters, the int8 weights, and that onnxruntime turns the QDQ
// graph into integer kernels that compute what the fp32 graph does.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { calibrationGraph } from '../../bench/calibration.ts';
import { int8WeightLimit, weightLimitFor } from '../../src/vision/int8-cpu.ts';
import { quantiseGraph } from '../../src/vision/int8-graph.ts';
import { quantParams, rangesSchema, readRanges, type ActivationRanges } from '../../src/vision/int8-ranges.ts';
import { quantiseBias, quantiseWeights } from '../../src/vision/int8-weights.ts';
import { editGraph } from '../../src/vision/model-graph.ts';
import { productInt8 } from '../../src/vision/model-session.ts';
import { readModelWeights } from '../../src/vision/model-weights.ts';
import { rgbToTensor } from '../../src/vision/preprocess.ts';
import { fixturePhoto } from '../support/fixtures.ts';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-int8-test-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Deterministic values in [-1, 1), so a failure reproduces. */
function pseudoRandom(count: number, seed: number): Float32Array {
  let state = seed;
  return Float32Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 30 - 1;
  });
}

const tensor = (name: string, dims: number[], values: Float32Array) => ({ name, dataType: FLOAT, dims, rawData: new Uint8Array(values.buffer) });
const ints = (name: string, values: number[]) => ({ name, type: onnx.AttributeProto.AttributeType.INTS, ints: values });

/** An fp32 model of `graph` (its nodes and initializers) from `input` to `output` of the shapes given. */
function modelOf(name: string, inputDims: number[], outputDims: number[], graph: Pick<onnxProto.onnx.IGraphProto, 'initializer' | 'node'>): Uint8Array {
  const value = (valueName: string, dims: number[]) => ({ name: valueName, type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => ({ dimValue: d })) } } } });
  return onnx.ModelProto.encode({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 15 }],
    graph: { name, input: [value('input', inputDims)], output: [value('output', outputDims)], ...graph },
  }).finish();
}

/** x → Conv 3×3 → Relu → Conv 1×1 → y: one Conv + Relu to quantise, and one producing logits that stays fp32. */
function tinyModel(): Uint8Array {
  return modelOf('tiny', [1, 3, 16, 16], [1, 2, 16, 16], {
    initializer: [
      tensor('w1', [8, 3, 3, 3], pseudoRandom(8 * 27, 1)),
      tensor('b1', [8], pseudoRandom(8, 2)),
      tensor('w2', [2, 8, 1, 1], pseudoRandom(16, 3)),
      tensor('b2', [2], pseudoRandom(2, 4)),
    ],
    node: [
      { opType: 'Conv', name: 'conv1', input: ['input', 'w1', 'b1'], output: ['c1'], attribute: [ints('pads', [1, 1, 1, 1]), ints('kernel_shape', [3, 3])] },
      { opType: 'Relu', name: 'relu1', input: ['c1'], output: ['r1'] },
      { opType: 'Conv', name: 'conv2', input: ['r1', 'w2', 'b2'], output: ['output'], attribute: [ints('kernel_shape', [1, 1])] },
    ],
  });
}

/**
 * Three Conv + Relu layers whose outputs two Concats join, one layer (rb) in both: ra ‖ rb and
 * rb ‖ rc, each followed by a Conv producing logits, summed.
 */
function concatModel(): Uint8Array {
  // [name, input, output, output channels, weight scale]: the scales give the layers different
  // ranges, the last (rc, joined to ra only through rb) the widest.
  const layers = [
    ['ca', 'input', 'a', 4, 1],
    ['cb', 'ra', 'b', 4, 0.5],
    ['cc', 'rb', 'c', 4, 4],
    ['cd', 'cat1', 'd', 2, 1],
    ['ce', 'cat2', 'e', 2, 1],
  ] as const;
  const channels = (name: string) => (name === 'input' ? 3 : name.startsWith('cat') ? 8 : 4);
  const conv = ([name, input, output]: (typeof layers)[number]) => ({ opType: 'Conv', name, input: [input, `${name}_w`, `${name}_b`], output: [output], attribute: [ints('kernel_shape', [1, 1])] });
  const axis = { name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 1 };
  return modelOf('concats', [1, 3, 8, 8], [1, 2, 8, 8], {
    initializer: layers.flatMap(([name, input, , outs, scale], i) => [
      tensor(`${name}_w`, [outs, channels(input), 1, 1], pseudoRandom(outs * channels(input), 20 + i).map((v) => v * scale)),
      tensor(`${name}_b`, [outs], pseudoRandom(outs, 40 + i)),
    ]),
    node: [
      ...layers.slice(0, 3).flatMap((layer) => [conv(layer), { opType: 'Relu', name: `relu_${layer[2]}`, input: [layer[2]], output: [`r${layer[2]}`] }]),
      { opType: 'Concat', name: 'concat1', input: ['ra', 'rb'], output: ['cat1'], attribute: [axis] },
      { opType: 'Concat', name: 'concat2', input: ['rb', 'rc'], output: ['cat2'], attribute: [axis] },
      ...layers.slice(3).map(conv),
      { opType: 'Add', name: 'sum', input: ['d', 'e'], output: ['output'] },
    ],
  });
}

/** The scale and zero point each QuantizeLinear of `model` applies, by the tensor it quantises. */
function quantisers(model: Uint8Array): Map<string, [number, number]> {
  const graph = onnx.ModelProto.decode(model).graph!;
  const init = new Map(graph.initializer!.map((t) => [t.name!, t]));
  const scalar = (name: string) => {
    const raw = init.get(name)!.rawData!;
    return init.get(name)!.dataType === FLOAT ? new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getFloat32(0, true) : raw[0]!;
  };
  return new Map(graph.node!.filter((n) => n.opType === 'QuantizeLinear').map((n) => [n.input![0]!, [scalar(n.input![1]!), scalar(n.input![2]!)]]));
}

/** Exact min/max of every calibrated activation over `inputs`. */
async function measureRanges(model: Uint8Array, inputs: Float32Array[], dims: number[]): Promise<ActivationRanges> {
  const { model: exposed, tensors } = calibrationGraph(model);
  const session = await ort.InferenceSession.create(exposed);
  const ranges: ActivationRanges = { percentile: 100, images: ['synthetic'], tensors: {} };
  for (const input of inputs) {
    const out = await session.run({ input: new ort.Tensor('float32', input, dims) }, tensors);
    for (const name of tensors) {
      const data = out[name]!.data as Float32Array;
      const prev = ranges.tensors[name];
      const min = Math.min(prev?.min ?? Infinity, ...data);
      const max = Math.max(prev?.max ?? -Infinity, ...data);
      ranges.tensors[name] = { min, max, low: min, high: max };
    }
  }
  await session.release();
  return ranges;
}

/** The largest difference between the outputs of `quantised` and `fp32` for `input`, and the spread of fp32's. */
async function differenceFromFp32(fp32: Uint8Array, quantised: Uint8Array, input: ort.Tensor): Promise<{ worst: number; spread: number }> {
  const run = async (model: Uint8Array) => {
    const session = await ort.InferenceSession.create(model);
    const out = (await session.run({ input })).output!.data as Float32Array;
    await session.release();
    return out;
  };
  const [expected, actual] = [await run(fp32), await run(quantised)];
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(expected[i]! - actual[i]!));
  return { worst, spread: Math.max(...expected) - Math.min(...expected) };
}

/** QLinearConcats of an optimised graph with an input not quantised as the output (onnxruntime requantises those through a lookup table). */
function requantisingConcats(file: string): number {
  const graph = onnx.ModelProto.decode(fs.readFileSync(file)).graph!;
  const init = new Map(graph.initializer!.map((t) => [t.name!, t]));
  const value = (name: string) => {
    const t = init.get(name);
    if (!t) throw new Error(`${name} is not a constant`);
    return JSON.stringify([Array.from(t.rawData ?? []), t.floatData, t.int32Data]);
  };
  return graph.node!.filter((n) => n.opType === 'QLinearConcat').filter((n) => {
    const [scale, zeroPoint, ...inputs] = n.input!;
    const output = value(scale!) + value(zeroPoint!);
    return inputs.some((_, i) => i % 3 === 0 && value(inputs[i + 1]!) + value(inputs[i + 2]!) !== output);
  }).length;
}

/** The op types of the graph onnxruntime runs for `model` after its optimisations. */
async function optimisedOps(model: Uint8Array, name: string, options: ort.InferenceSession.SessionOptions = {}): Promise<{ session: ort.InferenceSession; ops: string[] }> {
  const file = path.join(scratch, `${name}.onnx`);
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all', optimizedModelFilePath: file, logSeverityLevel: 3, ...options });
  return { session, ops: onnx.ModelProto.decode(fs.readFileSync(file)).graph!.node!.map((n) => n.opType!) };
}

describe('quantisation parameters', () => {
  it('gives a Relu output the lowest value of the type as zero point and the image input its exact step', () => {
    assert.deepEqual(quantParams({ min: 0, max: 255 / 4, low: 0, high: 255 / 16 }, 'minmax', 'uint8'), { scale: 1 / 4, zeroPoint: 0 });
    assert.deepEqual(quantParams({ min: 0, max: 255 / 4, low: 0, high: 255 / 16 }, 'percentile', 'int8'), { scale: 1 / 16, zeroPoint: -128 });
    assert.deepEqual(quantParams({ min: -0.5, max: 127 / 256, low: -0.5, high: 127 / 256 }, 'minmax', 'uint8'), { scale: 1 / 256, zeroPoint: 128 });
  });

  it('quantises each output channel of the weights on its own scale, and the bias on input × weight scale', () => {
    const { values, scales } = quantiseWeights(Float32Array.from([0.5, -1, 0.25, 0.001, 0.003, -0.004]), 2);
    assert.deepEqual(Array.from(values), [64, -127, 32, 32, 95, -127]);
    assert.deepEqual(Array.from(scales), [Math.fround(1 / 127), Math.fround(0.004 / 127)]);
    const bias = quantiseBias(Float32Array.from([0.3, -0.3]), 0.5, scales);
    assert.deepEqual(Array.from(bias.values), [Math.round(0.3 / Math.fround(0.5 / 127)), Math.round(-0.3 / Math.fround(0.002 / 127))]);
  });

  it('keeps the weights within ±63 where the CPU would saturate ±127', () => {
    const { values, scales } = quantiseWeights(Float32Array.from([0.5, -1, 0.25, 0.001, 0.003, -0.004]), 2, 63);
    assert.deepEqual(Array.from(values), [32, -63, 16, 16, 47, -63]);
    assert.deepEqual(Array.from(scales), [Math.fround(1 / 63), Math.fround(0.004 / 63)]);
  });

  it('chooses ±127 weights only for a CPU with VNNI (AVX-512 or AVX), ±63 for AVX2 alone or an unreadable CPU', () => {
    const cpu = (flags: string) => `processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 ${flags}\n\nprocessor\t: 1\n`;
    assert.equal(weightLimitFor(cpu('avx2 avx512f avx512bw avx512_vnni'), 'x64'), 127);
    assert.equal(weightLimitFor(cpu('avx2 avx_vnni'), 'x64'), 127);
    assert.equal(weightLimitFor(cpu('avx2 avx512f avx512bw'), 'x64'), 63);
    assert.equal(weightLimitFor(cpu('avx2 fma'), 'x64'), 63);
    assert.equal(weightLimitFor('', 'x64'), 63);
    assert.equal(weightLimitFor('processor\t: 0\nFeatures\t: fp asimd asimddp\n', 'arm64'), 127, "Arm's integer kernels do not saturate");
  });

  it('refuses a ranges file whose numbers are out of order', () => {
    assert.throws(() => rangesSchema.parse({ percentile: 99.99, images: ['a'], tensors: { t: { min: 1, max: 0, low: 0, high: 0 } } }));
  });
});

describe('quantiseGraph on a tiny graph', async () => {
  const fp32 = tinyModel();
  const dims = [1, 3, 16, 16];
  const ranges = await measureRanges(fp32, [1, 2, 3].map((seed) => pseudoRandom(3 * 256, seed + 10)), dims);

  for (const activations of ['uint8', 'int8'] as const) {
    it(`runs the Conv + Relu as one QLinearConv (${activations} activations) and keeps the logit Conv in fp32`, async () => {
      const { session, ops } = await optimisedOps(quantiseGraph(fp32, ranges, { activations, range: 'minmax', weightLimit: int8WeightLimit(), concatRanges: 'own' }), `tiny-${activations}`);
      await session.release();
      assert.equal(ops.filter((op) => op === 'QLinearConv').length, 1, ops.join(' '));
      assert.ok(!ops.includes('Relu'), ops.join(' '));
    });
  }

  // With the weight range this CPU multiplies exactly: without VNNI, ±127 weights saturate the
  // kernel's 16-bit sums on this graph's pseudo-random weights, which is the CPU's error, not the quantiser's.
  it('computes within a few quantisation steps of the fp32 graph on an input it was not calibrated on', async () => {
    const input = new ort.Tensor('float32', pseudoRandom(3 * 256, 99), dims);
    const quantised = quantiseGraph(fp32, ranges, { activations: 'uint8', range: 'minmax', weightLimit: int8WeightLimit(), concatRanges: 'own' });
    const { worst, spread } = await differenceFromFp32(fp32, quantised, input);
    assert.ok(worst > 0, 'the quantised graph is not the fp32 graph');
    assert.ok(worst < 0.03 * spread, `largest difference ${worst} over an output spread of ${spread}`);
  });

  it('takes interleaved bytes in place of normalised planes when its input is calibrated over the byte range, with the same output to the last bit', async () => {
    const bytes = Uint8Array.from(pseudoRandom(3 * 256, 31), (v) => Math.floor((v + 1) * 128));
    bytes.set([0, 255], 0);
    const planes = rgbToTensor(bytes);
    const byteRanges = await measureRanges(fp32, [planes], dims);
    const options = { activations: 'uint8', range: 'minmax', weightLimit: int8WeightLimit(), concatRanges: 'own' } as const;
    const run = async (model: Uint8Array, input: ort.Tensor) => {
      const session = await ort.InferenceSession.create(model);
      const out = (await session.run({ input })).output!.data as Float32Array;
      await session.release();
      return out;
    };
    const fromPlanes = await run(quantiseGraph(fp32, byteRanges, options), new ort.Tensor('float32', planes, dims));
    const fromBytes = await run(quantiseGraph(fp32, byteRanges, { ...options, input: 'bytes' }), new ort.Tensor('uint8', bytes, [1, 16, 16, 3]));
    assert.deepEqual(fromBytes, fromPlanes);
  });

  it('with its weights one lower over a zero point of −1, still runs one QLinearConv and computes the same output to the last bit', async () => {
    const options = { activations: 'uint8', range: 'minmax', weightLimit: int8WeightLimit(), concatRanges: 'own' } as const;
    const offset = quantiseGraph(fp32, ranges, { ...options, weightZeroPoint: -1 });
    const zeroPointTensors = onnx.ModelProto.decode(offset).graph!.initializer!.filter((t) => t.name!.endsWith('_int8_zero_point'));
    const zeroPoints = zeroPointTensors.flatMap((t) => [...new Int8Array(Uint8Array.from(t.rawData!).buffer)]);
    assert.ok(zeroPoints.length > 0 && zeroPoints.every((z) => z === -1), zeroPoints.join(' '));
    const { session: optimised, ops } = await optimisedOps(offset, 'tiny-offset');
    await optimised.release();
    assert.equal(ops.filter((op) => op === 'QLinearConv').length, 1, ops.join(' '));
    const input = new ort.Tensor('float32', pseudoRandom(3 * 256, 77), dims);
    const run = async (model: Uint8Array) => {
      const session = await ort.InferenceSession.create(model);
      const out = (await session.run({ input })).output!.data as Float32Array;
      await session.release();
      return out;
    };
    assert.deepEqual(await run(offset), await run(quantiseGraph(fp32, ranges, options)));
  });

  it('refuses to take bytes where the input was calibrated over another range', () => {
    assert.throws(
      () => quantiseGraph(fp32, ranges, { activations: 'uint8', range: 'minmax', weightLimit: int8WeightLimit(), concatRanges: 'own', input: 'bytes' }),
      /quantised as its own bytes only as uint8 over the byte range/,
    );
  });

  it('refuses to quantise an activation the ranges do not cover', () => {
    const partial = { ...ranges, tensors: { ...ranges.tensors } };
    delete partial.tensors['r1'];
    assert.throws(() => quantiseGraph(fp32, partial, { activations: 'uint8', range: 'minmax', weightLimit: int8WeightLimit(), concatRanges: 'own' }), /no calibrated range for r1/);
  });
});

describe('quantiseGraph on Concats', async () => {
  const fp32 = concatModel();
  const dims = [1, 3, 8, 8];
  const ranges = await measureRanges(fp32, [1, 2, 3].map((seed) => pseudoRandom(3 * 64, seed + 50)), dims);
  const options = { activations: 'uint8', range: 'minmax', weightLimit: int8WeightLimit() } as const;

  it('quantises every tensor two Concats join over one range covering all of theirs, so the Concats copy bytes', async () => {
    const joined = ['ra', 'rb', 'rc', 'cat1', 'cat2'];
    const widest = ranges.tensors['rc']!.max;
    assert.equal(widest, Math.max(...joined.map((name) => ranges.tensors[name]!.max)));
    const own = quantisers(quantiseGraph(fp32, ranges, { ...options, concatRanges: 'own' }));
    assert.ok(new Set(joined.map((name) => own.get(name)![0])).size > 1, 'the layers were calibrated to different ranges');
    const model = quantiseGraph(fp32, ranges, { ...options, concatRanges: 'shared' });
    const shared = quantisers(model);
    for (const name of joined) assert.deepEqual(shared.get(name), [Math.fround(widest / 255), 0], name);
    const { session, ops } = await optimisedOps(model, 'concats');
    await session.release();
    assert.equal(ops.filter((op) => op === 'QLinearConcat').length, 2, ops.join(' '));
  });

  it('still computes within a few quantisation steps of the fp32 graph', async () => {
    const input = new ort.Tensor('float32', pseudoRandom(3 * 64, 98), dims);
    const { worst, spread } = await differenceFromFp32(fp32, quantiseGraph(fp32, ranges, { ...options, concatRanges: 'shared' }), input);
    assert.ok(worst > 0 && worst < 0.03 * spread, `largest difference ${worst} over an output spread of ${spread}`);
  });
});

describe('quantiseGraph on ISNet with the committed ranges', async () => {
  const fp32 = editGraph(await readModelWeights(), { output: 'output', float32: true });
  const ranges = readRanges();

  it('becomes QLinearConvs after session optimisation, all but the logit Conv', async () => {
    const { session, ops } = await optimisedOps(quantiseGraph(fp32, ranges, { activations: 'uint8', range: 'minmax', weightLimit: int8WeightLimit(), concatRanges: 'own' }), 'isnet', { intraOpNumThreads: 2, enableMemPattern: false });
    await session.release();
    const convs = onnx.ModelProto.decode(fp32).graph!.node!.filter((n) => n.opType === 'Conv').length;
    assert.equal(ops.filter((op) => op === 'QLinearConv').length, convs - 1);
    assert.equal(ops.filter((op) => op === 'Conv').length, 1);
  });

  it('as the product builds it on every CPU, joins bytes quantised alike in every Concat (one shared range per Concat group), which over their own ranges most Concats would requantise', async () => {
    const sessionOptions = { intraOpNumThreads: 2, enableMemPattern: false };
    const requantising = async (concatRanges: 'own' | 'shared') => {
      const { session, ops } = await optimisedOps(quantiseGraph(fp32, ranges, { ...productInt8, weightLimit: int8WeightLimit(), concatRanges }), `isnet-concat-${concatRanges}`, sessionOptions);
      await session.release();
      return { concats: ops.filter((op) => op === 'QLinearConcat').length, requantising: requantisingConcats(path.join(scratch, `isnet-concat-${concatRanges}.onnx`)) };
    };
    const product = await requantising(productInt8.concatRanges);
    const own = await requantising('own');
    assert.ok(product.concats > 0 && product.concats === own.concats, `QLinearConcats: ${product.concats} and ${own.concats}`);
    assert.equal(product.requantising, 0);
    assert.ok(own.requantising > own.concats / 2, `${own.requantising} of ${own.concats} requantise over their own ranges`);
  });

  it("as the product builds it, feeds a photo's bytes straight into its first integer convolution, and masks them as from normalised planes", async () => {
    const options = { ...productInt8, weightLimit: int8WeightLimit(), input: 'floats' } as const;
    const bytes = new Uint8Array(await sharp(fixturePhoto('am-gt07')).removeAlpha().resize(1024, 1024, { fit: 'fill' }).raw().toBuffer());
    const sessionOptions = { intraOpNumThreads: 2, enableMemPattern: false };
    const byteGraph = await optimisedOps(quantiseGraph(fp32, ranges, { ...options, input: 'bytes' }), 'isnet-bytes', sessionOptions);
    const file = onnx.ModelProto.decode(fs.readFileSync(path.join(scratch, 'isnet-bytes.onnx'))).graph!;
    const readers = file.node!.filter((n) => n.input!.includes('input')).map((n) => n.opType);
    assert.deepEqual(readers, ['QLinearConv'], 'nothing converts the bytes before the first convolution');
    const fromBytes = (await byteGraph.session.run({ input: new ort.Tensor('uint8', bytes, [1, 1024, 1024, 3]) })).output!.data as Float32Array;
    await byteGraph.session.release();
    const planeGraph = await ort.InferenceSession.create(quantiseGraph(fp32, ranges, options), { graphOptimizationLevel: 'all', ...sessionOptions });
    const fromPlanes = (await planeGraph.run({ input: new ort.Tensor('float32', rgbToTensor(bytes), [1, 3, 1024, 1024]) })).output!.data as Float32Array;
    await planeGraph.release();
    assert.ok(fromBytes.some((v) => v > 0.5) && fromBytes.some((v) => v < 0.5), 'the photo has subject and background');
    assert.ok(fromBytes.every((v, i) => v === fromPlanes[i]), 'the same mask to the last bit');
  });
});
