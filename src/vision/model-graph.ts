// Edits to the shipped ISNet graph, done once before onnxruntime optimises and saves it.
import onnxProto from 'onnx-proto';

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
