// Static INT8 quantisation of the fp32 ISNet graph in QDQ form: QuantizeLinear/DequantizeLinear
// pairs around the activations and int8 weights behind DequantizeLinear, which onnxruntime's QDQ
// transformers turn into QLinearConv, QLinearAdd, QLinearConcat and integer MaxPool/Resize.
import onnxProto from 'onnx-proto';
import type { WeightLimit } from './int8-cpu.ts';
import { quantParams, type ActivationRanges, type ActivationType, type QuantParams, type RangeKind, type TensorRange } from './int8-ranges.ts';
import { floatData, floatTensor, int32Tensor, int8Tensor, quantiseBias, quantiseWeights } from './int8-weights.ts';

const { onnx } = onnxProto;
type NodeProto = onnxProto.onnx.INodeProto;
type GraphProto = onnxProto.onnx.IGraphProto;
type TensorProto = onnxProto.onnx.ITensorProto;

const FLOAT = onnx.TensorProto.DataType.FLOAT;

export interface Int8Options {
  activations: ActivationType;
  range: RangeKind;
  /** Conv nodes (by name) left in fp32; their neighbours are still quantised. */
  keepFloat?: ReadonlySet<string>;
  /** The weights' range, ±127 or ±63 (int8-cpu.ts: the CPU that runs the graph decides). */
  weightLimit: WeightLimit;
  /**
   * `own`: each tensor over its own range. `shared` (the product): every Concat's inputs and output
   * over one range, the union of their calibrated ones, so that onnxruntime's QLinearConcat copies
   * bytes instead of requantising each input through a lookup table.
   */
  concatRanges: 'own' | 'shared';
  /**
   * `floats` (the default): the graph's input stays the fp32 graph's, normalised planes (N×3×H×W).
   * `bytes`: it takes the photo's interleaved RGB bytes (uint8, N×H×W×3) as they are. Quantised
   * over the byte range, (b − 128) / 256 in steps of 1/256 with zero point 128, the input's
   * QuantizeLinear gives back each byte as it was, so the graph begins at its DequantizeLinear,
   * behind a Transpose that onnxruntime folds into the NHWC layout of its integer convolutions:
   * the bytes go into the first QLinearConv unchanged, with no float tensor written, quantised
   * and transposed back first. The masks are the same to the last bit.
   */
  input?: 'floats' | 'bytes';
  /**
   * `0` (the default, the product): onnxruntime's x86 QLinearConv takes symmetric weights to its
   * indirect-convolution kernels (VNNI). `-1`: each weight one lower over a zero point of −1, the
   * same products, which sends every convolution to its im2col and general integer GEMM instead, the
   * only path that uses AMX tiles where the CPU has them (`npm run bench:inference -- --weights`).
   */
  weightZeroPoint?: 0 | -1;
}

/** Ops that only move or pick values: their output keeps the input's parameters, so onnxruntime drops the QDQ pair around them. */
const passThrough = new Set(['MaxPool', 'Resize']);
/** Ops onnxruntime replaces with a QLinear kernel that rescales from the inputs' parameters to the output's. */
const requantising = new Set(['Add', 'Concat']);
/** Ops whose output is an activation when their (first) input is one. */
const floatOps = new Set(['Conv', 'Relu', 'MaxPool', 'Resize', 'Add', 'Concat', 'Sigmoid']);

/**
 * The fp32 graph without its Casts to float: what remains of the shipped graph's fp16 conversions
 * are no-ops, but a Cast between a Relu and a QuantizeLinear hides the pattern the QDQ fusions look for.
 */
export function withoutNoOpCasts(graph: GraphProto): void {
  const graphOutputs = new Set((graph.output ?? []).map((o) => o.name));
  const replaced = new Map<string, string>();
  const source = (name: string): string => (replaced.has(name) ? source(replaced.get(name)!) : name);
  graph.node = (graph.node ?? []).filter((node) => {
    const to = node.attribute?.find((a) => a.name === 'to');
    if (node.opType !== 'Cast' || Number(to?.i) !== FLOAT || graphOutputs.has(node.output![0]!)) return true;
    replaced.set(node.output![0]!, node.input![0]!);
    return false;
  });
  for (const node of graph.node) node.input = (node.input ?? []).map(source);
}

function activations(graph: GraphProto): Set<string> {
  const found = new Set((graph.input ?? []).filter((i) => i.type?.tensorType?.elemType === FLOAT).map((i) => i.name!));
  for (const node of graph.node ?? []) {
    if (floatOps.has(node.opType!) && node.input!.some((i) => found.has(i))) found.add(node.output![0]!);
  }
  return found;
}

function consumersOf(graph: GraphProto): Map<string, NodeProto[]> {
  const map = new Map<string, NodeProto[]>();
  for (const node of graph.node ?? []) for (const input of node.input ?? []) map.set(input, [...(map.get(input) ?? []), node]);
  return map;
}

/**
 * Every activation a calibration should measure: all but a Conv output that only feeds a Relu,
 * whose range is the Relu's with the negatives cut.
 */
export function calibrationTensors(graph: GraphProto): string[] {
  const consumers = consumersOf(graph);
  const outputs = new Set((graph.output ?? []).map((o) => o.name));
  return [...activations(graph)].filter((name) => {
    const users = consumers.get(name) ?? [];
    return !outputs.has(name) && !(users.length === 1 && users[0]!.opType === 'Relu');
  });
}

interface Plan {
  /** Conv nodes to run as QLinearConv, with the tensor their quantised output is taken from. */
  convs: Map<NodeProto, string>;
  /** Activations to route through a QuantizeLinear → DequantizeLinear pair, in graph order. */
  tensors: string[];
  /** Pass-through outputs and the input whose parameters they take. */
  inherits: Map<string, string>;
}

/**
 * Which nodes run in int8. A Conv is quantised when its output goes only to a Relu (Conv + Relu
 * become one QLinearConv) or only to quantised Convs; the Conv producing the mask's logits is
 * neither and stays fp32, since 256 levels over the logits would band the soft edges. The other
 * ops are quantised only when all their inputs already are, so no extra QDQ pair is created for them.
 */
function plan(graph: GraphProto, keepFloat: ReadonlySet<string>): Plan {
  const acts = activations(graph);
  const consumers = consumersOf(graph);
  const graphOutputs = new Set((graph.output ?? []).map((o) => o.name));
  const convs = new Map<NodeProto, string>();
  const candidates = (graph.node ?? []).filter((n) => n.opType === 'Conv' && !keepFloat.has(n.name!));
  const candidateSet = new Set(candidates);
  for (const conv of candidates) {
    const users = consumers.get(conv.output![0]!) ?? [];
    if (users.length === 1 && users[0]!.opType === 'Relu') convs.set(conv, users[0]!.output![0]!);
    else if (users.length > 0 && users.every((u) => u.opType === 'Conv' && candidateSet.has(u))) convs.set(conv, conv.output![0]!);
  }
  const quantised = new Set<string>();
  const inherits = new Map<string, string>();
  for (const node of graph.node ?? []) {
    const inputs = node.input!.filter((i) => acts.has(i));
    const output = node.output![0]!;
    if (node.opType === 'Conv' && convs.has(node)) {
      quantised.add(node.input![0]!);
      quantised.add(convs.get(node)!);
    } else if ((passThrough.has(node.opType!) || requantising.has(node.opType!)) && inputs.length > 0 && inputs.every((i) => quantised.has(i))) {
      quantised.add(output);
      if (passThrough.has(node.opType!)) inherits.set(output, inputs[0]!);
    }
  }
  const order = [...(graph.input ?? []).map((i) => i.name!), ...(graph.node ?? []).flatMap((n) => n.output ?? [])];
  const tensors = order.filter((name) => quantised.has(name) && !graphOutputs.has(name));
  return { convs, tensors, inherits };
}

/** The tensor whose parameters a pass-through output takes, followed back through pass-throughs. */
function ownerOf(plan: Plan, name: string): string {
  const source = plan.inherits.get(name);
  return source ? ownerOf(plan, source) : name;
}

/**
 * Each quantised tensor that a Concat joins to others (directly or through a pass-through), with the
 * union of the ranges of everything joined to it, transitively: a tensor concatenated twice
 * shares one range with both Concats.
 */
function sharedConcatRanges(graph: GraphProto, plan: Plan, ranges: ActivationRanges): Map<string, TensorRange> {
  const quantised = new Set(plan.tensors);
  const parent = new Map<string, string>();
  const root = (name: string): string => {
    const up = parent.get(name);
    return up === undefined ? name : root(up);
  };
  const joined = new Set<string>();
  for (const node of graph.node ?? []) {
    if (node.opType !== 'Concat' || !quantised.has(node.output![0]!)) continue;
    const members = [node.output![0]!, ...node.input!.filter((i) => quantised.has(i))].map((t) => ownerOf(plan, t));
    for (const member of members) joined.add(member);
    const first = root(members[0]!);
    for (const member of members.slice(1)) if (root(member) !== first) parent.set(root(member), first);
  }
  const unions = new Map<string, TensorRange>();
  for (const name of joined) {
    const range = calibrated(ranges, name);
    const group = unions.get(root(name));
    unions.set(root(name), group ? { min: Math.min(group.min, range.min), max: Math.max(group.max, range.max), low: Math.min(group.low, range.low), high: Math.max(group.high, range.high) } : range);
  }
  return new Map([...joined].map((name) => [name, unions.get(root(name))!]));
}

function calibrated(ranges: ActivationRanges, name: string): TensorRange {
  const range = ranges.tensors[name];
  if (!range) throw new Error(`no calibrated range for ${name}; run npm run calibrate`);
  return range;
}

function paramsFor(graph: GraphProto, plan: Plan, ranges: ActivationRanges, options: Int8Options, graphInputs: Set<string>): Map<string, QuantParams> {
  const params = new Map<string, QuantParams>();
  const shared = options.concatRanges === 'shared' ? sharedConcatRanges(graph, plan, ranges) : new Map<string, TensorRange>();
  for (const name of plan.tensors) {
    const source = plan.inherits.get(name);
    if (source) {
      params.set(name, params.get(source)!);
      continue;
    }
    const range = shared.get(name) ?? calibrated(ranges, name);
    // The input holds at most 256 distinct values ((byte − 128) / 256), which its full range represents exactly.
    params.set(name, quantParams(range, graphInputs.has(name) ? 'minmax' : options.range, options.activations));
  }
  return params;
}

function zeroPointTensor(name: string, zeroPoint: number, type: ActivationType): TensorProto {
  const dataType = type === 'uint8' ? onnx.TensorProto.DataType.UINT8 : onnx.TensorProto.DataType.INT8;
  return { name, dataType, dims: [], rawData: new Uint8Array([zeroPoint & 0xff]) };
}

/** The graph with int8 weights and QDQ pairs; `model` is the fp32 graph (editGraph's output). */
export function quantiseGraph(model: Uint8Array, ranges: ActivationRanges, options: Int8Options): Uint8Array {
  const proto = onnx.ModelProto.decode(model);
  const graph = proto.graph!;
  withoutNoOpCasts(graph);
  const planned = plan(graph, options.keepFloat ?? new Set());
  const params = paramsFor(graph, planned, ranges, options, new Set((graph.input ?? []).map((i) => i.name!)));
  const initializers = new Map((graph.initializer ?? []).map((t) => [t.name!, t]));
  const added: TensorProto[] = [];
  const after = new Map<string, NodeProto[]>();
  const dequantised = new Map<string, string>();

  for (const name of planned.tensors) {
    const { scale, zeroPoint } = params.get(name)!;
    added.push(floatTensor(`${name}_scale`, [scale]), zeroPointTensor(`${name}_zero_point`, zeroPoint, options.activations));
    const q = `${name}_quantised`;
    dequantised.set(name, `${name}_dequantised`);
    after.set(name, [
      { opType: 'QuantizeLinear', name: `${name}/QuantizeLinear`, input: [name, `${name}_scale`, `${name}_zero_point`], output: [q] },
      { opType: 'DequantizeLinear', name: `${name}/DequantizeLinear`, input: [q, `${name}_scale`, `${name}_zero_point`], output: [`${name}_dequantised`] },
    ]);
  }
  for (const conv of planned.convs.keys()) {
    const [, weightName, biasName] = conv.input!;
    const weight = initializers.get(weightName!);
    if (!weight) throw new Error(`${conv.name}: weights are not an initializer`);
    const channels = Number(weight.dims![0]);
    const { values, scales } = quantiseWeights(floatData(weight), channels, options.weightLimit);
    const zeroPoint = options.weightZeroPoint ?? 0;
    // Within ±127, one lower stays within int8.
    if (zeroPoint !== 0) for (let i = 0; i < values.length; i++) values[i]! += zeroPoint;
    const wq = `${weightName}_int8`;
    added.push(int8Tensor(wq, values, weight.dims!.map(Number)), floatTensor(`${wq}_scale`, scales, [channels]), int8Tensor(`${wq}_zero_point`, new Int8Array(channels).fill(zeroPoint), [channels]));
    const dequantisers: NodeProto[] = [dequantise(wq, `${weightName}_dequantised`)];
    conv.input![1] = `${weightName}_dequantised`;
    if (biasName) {
      const bias = initializers.get(biasName);
      if (!bias) throw new Error(`${conv.name}: bias is not an initializer`);
      const b = quantiseBias(floatData(bias), params.get(conv.input![0]!)!.scale, scales);
      const bq = `${biasName}_int32`;
      added.push(int32Tensor(bq, b.values, [channels]), floatTensor(`${bq}_scale`, b.scales, [channels]), int32Tensor(`${bq}_zero_point`, new Int32Array(channels), [channels]));
      dequantisers.push(dequantise(bq, `${biasName}_dequantised`));
      conv.input![2] = `${biasName}_dequantised`;
    }
    after.set(`${conv.name}/weights`, dequantisers);
  }
  for (const node of graph.node ?? []) node.input = node.input!.map((i) => dequantised.get(i) ?? i);

  const used = new Set((graph.node ?? []).flatMap((n) => n.input ?? []));
  const nodes: NodeProto[] = [];
  for (const input of graph.input ?? []) nodes.push(...(after.get(input.name!) ?? []));
  for (const node of graph.node ?? []) {
    if (node.opType === 'Conv') nodes.push(...(after.get(`${node.name}/weights`) ?? []));
    nodes.push(node, ...(after.get(node.output![0]!) ?? []));
  }
  graph.node = nodes;
  graph.initializer = [...(graph.initializer ?? []).filter((t) => used.has(t.name!)), ...added];
  graph.valueInfo = [];
  if (options.input === 'bytes') takeBytes(graph, params, options.activations);
  return onnx.ModelProto.encode(proto).finish();
}

/** The graph's one input as interleaved bytes in place of its quantiser (Int8Options.input). */
function takeBytes(graph: GraphProto, params: Map<string, QuantParams>, activations: ActivationType): void {
  const [input, ...others] = graph.input ?? [];
  const dims = input?.type?.tensorType?.shape?.dim ?? [];
  if (!input || others.length > 0 || input.type?.tensorType?.elemType !== FLOAT || dims.length !== 4 || Number(dims[1]?.dimValue) !== 3) {
    throw new Error('only a graph with one float input of N×3×H×W takes bytes');
  }
  const name = input.name!;
  const exact = params.get(name);
  if (activations !== 'uint8' || !exact || Math.fround(exact.scale) !== 1 / 256 || exact.zeroPoint !== 128) {
    throw new Error(`${name} is quantised as its own bytes only as uint8 over the byte range (scale 1/256, zero point 128)`);
  }
  const quantiser = `${name}/QuantizeLinear`;
  if (!(graph.node ?? []).some((node) => node.name === quantiser)) throw new Error(`${name} has no QuantizeLinear to replace`);
  // The bytes come in under the input's own name; the Transpose gives its quantised name, which the
  // DequantizeLinear after it reads.
  const transpose: NodeProto = {
    opType: 'Transpose',
    name: `${name}/Transpose`,
    input: [name],
    output: [`${name}_quantised`],
    attribute: [{ name: 'perm', type: onnx.AttributeProto.AttributeType.INTS, ints: [0, 3, 1, 2] }],
  };
  graph.node = [transpose, ...graph.node!.filter((node) => node.name !== quantiser)];
  input.type!.tensorType!.elemType = onnx.TensorProto.DataType.UINT8;
  input.type!.tensorType!.shape!.dim = [dims[0]!, dims[2]!, dims[3]!, dims[1]!];
}

/** Per-output-channel DequantizeLinear of an initializer `name` with `name_scale` and `name_zero_point`. */
function dequantise(name: string, output: string): NodeProto {
  return {
    opType: 'DequantizeLinear',
    name: `${name}/DequantizeLinear`,
    input: [name, `${name}_scale`, `${name}_zero_point`],
    output: [output],
    attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
  };
}
