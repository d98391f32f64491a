// Edits to the shipped ISNet graph, done once before onnxruntime optimises and saves it.
import onnxProto from 'onnx-proto';
import { sideStep } from './model-sides.ts';

const { onnx } = onnxProto;
type NodeProto = onnxProto.onnx.INodeProto;
type GraphProto = onnxProto.onnx.IGraphProto;

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const FLOAT16 = onnx.TensorProto.DataType.FLOAT16;

export interface GraphEdits {
  /** The one output to keep; everything that only feeds the others is dropped. */
  output: string;
  /** Store weights and activations as fp32 instead of the shipped fp16. */
  float32: boolean;
  /** Accept any square input whose side is a multiple of sideStep, not only 1024 (see anySide). */
  anySide?: boolean;
}

/**
 * The shipped graph as the session should run it.
 *
 * `output`: the graph also declares eleven training-time side outputs (up to 64 × 512² floats each);
 * onnxruntime computes every node and keeps each graph output alive to the end of a run, fetched or
 * not, so dropping them saves ~115 MB of peak memory and the work of six 1024² side masks. The mask
 * is computed by exactly the same nodes.
 *
 * `float32`: the shipped graph keeps weights and activations in fp16. The x86 CPU provider has no
 * fp16 convolutions, so onnxruntime computes in fp32 anyway and converts every activation to fp16
 * and back around its ~100 Cast nodes: extra passes over memory, extra buffers, and rounding that
 * the fp32 graph does not have.
 */
export function editGraph(model: Uint8Array, edits: GraphEdits): Uint8Array {
  const proto = onnx.ModelProto.decode(model);
  const graph = proto.graph;
  if (!graph?.node || !graph.output) throw new Error('model has no graph');
  if (edits.anySide) scaleEveryResize(graph);
  keepOnlyOutput(graph, edits.output);
  if (edits.float32) toFloat32(graph);
  return onnx.ModelProto.encode(proto).finish();
}

function keepOnlyOutput(graph: GraphProto, outputName: string): void {
  const output = graph.output?.find((o) => o.name === outputName);
  if (!output) throw new Error(`model has no output named ${outputName}`);
  const producer = new Map<string, NodeProto>();
  for (const node of graph.node ?? []) for (const name of node.output ?? []) producer.set(name, node);
  const needed = new Set<NodeProto>();
  const usedValues = new Set<string>();
  const pending = [outputName];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (usedValues.has(name)) continue;
    usedValues.add(name);
    const node = producer.get(name);
    if (!node || needed.has(node)) continue;
    needed.add(node);
    for (const input of node.input ?? []) if (input) pending.push(input);
  }
  graph.node = (graph.node ?? []).filter((node) => needed.has(node));
  graph.output = [output];
  graph.initializer = (graph.initializer ?? []).filter((init) => usedValues.has(init.name ?? ''));
  graph.valueInfo = (graph.valueInfo ?? []).filter((info) => usedValues.has(info.name ?? ''));
}

/**
 * The shipped graph sizes each Resize with a constant made for a 1024² input (32×32 where it
 * doubles a 16×16 map), so it runs at 1024 only. Each Resize is given instead the factor its
 * constant makes from its input (×2 everywhere in ISNet; read from the shipped shapes), which holds
 * at every side: the constants and the nodes that only fed them drop out (keepOnlyOutput), and the
 * input and output take any height and width (onnxruntime checks each run's sizes as it goes).
 */
function scaleEveryResize(graph: GraphProto): void {
  const shapes = new Map((graph.valueInfo ?? []).map((info) => [info.name ?? '', info.type?.tensorType?.shape?.dim?.map((d) => Number(d.dimValue ?? 0)) ?? []]));
  const producer = new Map<string, NodeProto>();
  for (const node of graph.node ?? []) for (const name of node.output ?? []) producer.set(name, node);
  const added: onnxProto.onnx.ITensorProto[] = [];
  for (const node of graph.node ?? []) {
    if (node.opType !== 'Resize') continue;
    const [input, , , sizes] = node.input ?? [];
    const target = constantInts(sizes ? producer.get(sizes) : undefined, producer);
    const from = shapes.get(input ?? '') ?? [];
    const spatial = [from[2] ?? 0, from[3] ?? 0];
    if (!target || target.length !== 4 || !(spatial[0]! > 0 && spatial[1]! > 0)) throw new Error(`Resize ${node.name} has no constant size over a known input shape`);
    const scales = [1, 1, target[2]! / spatial[0]!, target[3]! / spatial[1]!];
    const name = `${node.name}_scales`;
    added.push({ name, dataType: FLOAT, dims: [4], rawData: new Uint8Array(Float32Array.from(scales).buffer) });
    node.input = [input!, '', name];
  }
  graph.initializer = [...(graph.initializer ?? []), ...added];
  for (const value of [...(graph.input ?? []), ...(graph.output ?? [])]) {
    const dims = value.type?.tensorType?.shape?.dim;
    if (dims?.length !== 4) throw new Error(`${value.name} is not an NCHW tensor`);
    dims[2] = { dimParam: 'height' };
    dims[3] = { dimParam: 'width' };
  }
  // The intermediate shapes recorded for 1024 no longer hold; onnxruntime infers them per run.
  graph.valueInfo = [];
}

/** The int64 values of a Concat of a Slice of a Shape (the batch and channels) and a constant (height and width). */
function constantInts(node: NodeProto | undefined, producer: Map<string, NodeProto>): number[] | undefined {
  if (node?.opType !== 'Concat' || node.input?.length !== 2) return undefined;
  const [head, tail] = node.input.map((name) => producer.get(name));
  const values = tail?.opType === 'Constant' ? tail.attribute?.find((a) => a.name === 'value')?.t : undefined;
  if (head?.opType !== 'Slice' || !values?.rawData || values.dataType !== onnx.TensorProto.DataType.INT64) return undefined;
  const raw = Uint8Array.from(values.rawData);
  return [1, 1, ...Array.from(new BigInt64Array(raw.buffer), Number)];
}

function toFloat32(graph: GraphProto): void {
  for (const init of graph.initializer ?? []) {
    if (init.dataType !== FLOAT16) continue;
    if (!init.rawData?.length) throw new Error(`fp16 initializer ${init.name} is not stored as raw data`);
    init.rawData = halvesToFloats(init.rawData);
    init.dataType = FLOAT;
  }
  // A Cast to fp16 becomes a Cast to fp32 of an fp32 value, which onnxruntime removes as a no-op.
  for (const node of graph.node ?? []) {
    if (node.opType !== 'Cast') continue;
    const to = node.attribute?.find((a) => a.name === 'to');
    if (to && Number(to.i) === FLOAT16) to.i = FLOAT;
  }
  // Shapes and types of intermediate values are inferred again by onnxruntime.
  graph.valueInfo = [];
  for (const value of [...(graph.input ?? []), ...(graph.output ?? [])]) {
    const tensor = value.type?.tensorType;
    if (tensor?.elemType === FLOAT16) tensor.elemType = FLOAT;
  }
}

let halfTable: Float32Array | undefined;

/** IEEE 754 half-precision bit patterns (little-endian) → float32 bytes. */
export function halvesToFloats(raw: Uint8Array): Uint8Array {
  halfTable ??= buildHalfTable();
  const count = raw.length >> 1;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = halfTable[view.getUint16(i * 2, true)]!;
  return new Uint8Array(out.buffer);
}

function buildHalfTable(): Float32Array {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const fraction = h & 0x3ff;
    if (exponent === 0) table[h] = sign * fraction * 2 ** -24;
    else if (exponent === 31) table[h] = fraction ? Number.NaN : sign * Infinity;
    else table[h] = sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
  }
  return table;
}
