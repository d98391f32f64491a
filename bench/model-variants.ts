// Graph edits for the inference experiments (`npm run bench:inference`), done in JS on the ONNX
// protobuf: the shipped ISNet graph fixes every Resize target at its 1024-input size, so running
// it at another input side means rescaling those constants and the declared input/output shapes.
import type * as ort from 'onnxruntime-node';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

/** One row of `npm run bench:inference`. */
export interface Variant {
  name: string;
  /** The model's input side. */
  side: number;
  model: () => Promise<Uint8Array | string>;
  options?: ort.InferenceSession.SessionOptions;
  /** The fixtures (by name) it is scored on; all of them when absent. */
  fixtures?: string[];
}

/**
 * The graph for square inputs of `side` pixels. Every Resize in ISNet takes its target size as
 * Concat(batch and channels from Shape(x), constant [H, W]); ISNet halves the resolution 7 times, so
 * any side divisible by 128 keeps every intermediate size exact and the constants scale by side/1024.
 */
export function resizeModelInput(model: Uint8Array, side: number): Uint8Array {
  if (side % 128 !== 0) throw new Error(`input side must be a multiple of 128, got ${side}`);
  const proto = onnx.ModelProto.decode(model);
  const graph = proto.graph!;
  const producer = new Map(graph.node!.map((n) => [n.output![0]!, n]));
  let rescaled = 0;
  for (const resize of graph.node!.filter((n) => n.opType === 'Resize')) {
    const concat = producer.get(resize.input![3]!);
    if (concat?.opType !== 'Concat') throw new Error(`${resize.name}: sizes are not a Concat`);
    const constant = producer.get(concat.input![1]!);
    const tensor = constant?.opType === 'Constant' ? constant.attribute![0]!.t : undefined;
    if (!tensor?.rawData || tensor.dataType !== onnx.TensorProto.DataType.INT64) throw new Error(`${resize.name}: spatial size is not an int64 constant`);
    const raw = new Uint8Array(tensor.rawData);
    const sizes = new BigInt64Array(raw.slice().buffer);
    const scaled = BigInt64Array.from(sizes, (v) => (v * BigInt(side)) / 1024n);
    tensor.rawData = new Uint8Array(scaled.buffer);
    rescaled++;
  }
  if (rescaled === 0) throw new Error('no Resize nodes found');
  for (const value of [...graph.input!, ...graph.output!]) {
    const dims = value.type?.tensorType?.shape?.dim ?? [];
    for (const dim of dims.slice(2)) if (Number(dim.dimValue) === 1024) dim.dimValue = side;
  }
  return onnx.ModelProto.encode(proto).finish();
}
