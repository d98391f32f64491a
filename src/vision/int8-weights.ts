// Convolution weights and biases as the integers a QLinearConv multiplies: int8 weights with one
// symmetric scale per output channel, int32 biases on the accumulator's scale.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
type TensorProto = onnxProto.onnx.ITensorProto;

const { FLOAT, INT8, INT32 } = onnx.TensorProto.DataType;

export function floatData(tensor: TensorProto): Float32Array {
  if (tensor.dataType !== FLOAT) throw new Error(`${tensor.name}: expected a float tensor, got type ${tensor.dataType}`);
  if (tensor.rawData?.length) return new Float32Array(new Uint8Array(tensor.rawData).buffer); // a copy: Buffers from protobufjs share a pool and need not be aligned
  return Float32Array.from(tensor.floatData ?? []);
}

export function floatTensor(name: string, values: ArrayLike<number>, dims: number[] = []): TensorProto {
  return { name, dataType: FLOAT, dims, rawData: new Uint8Array(Float32Array.from(values).buffer) };
}

export function int8Tensor(name: string, values: Int8Array, dims: number[] = []): TensorProto {
  return { name, dataType: INT8, dims, rawData: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) };
}

export function int32Tensor(name: string, values: Int32Array, dims: number[] = []): TensorProto {
  return { name, dataType: INT32, dims, rawData: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) };
}

export interface ChannelQuantised {
  values: Int8Array;
  /** One scale per output channel (the weight's first axis). */
  scales: Float32Array;
}

/**
 * Symmetric per-output-channel int8 over ±`limit` (127, or 63 where the CPU's multiply saturates:
 * int8-cpu.ts): each filter keeps its own resolution (filters of one layer differ in magnitude by
 * orders), and zero points of 0 spare MLAS the weight-side correction terms.
 */
export function quantiseWeights(weights: Float32Array, channels: number, limit = 127): ChannelQuantised {
  const perChannel = weights.length / channels;
  if (!Number.isInteger(perChannel)) throw new Error(`weights of ${weights.length} values do not split into ${channels} channels`);
  const values = new Int8Array(weights.length);
  const scales = new Float32Array(channels);
  for (let c = 0; c < channels; c++) {
    let peak = 0;
    for (let i = c * perChannel; i < (c + 1) * perChannel; i++) peak = Math.max(peak, Math.abs(weights[i]!));
    // An all-zero filter quantises to zeros at any scale; 1 keeps the scale valid.
    const scale = peak > 0 ? peak / limit : 1;
    scales[c] = scale;
    for (let i = c * perChannel; i < (c + 1) * perChannel; i++) values[i] = Math.max(-limit, Math.min(limit, Math.round(weights[i]! / scale)));
  }
  return { values, scales };
}

/** The bias on the scale of input × weight, which QLinearConv adds to its int32 accumulators as is. */
export function quantiseBias(bias: Float32Array, inputScale: number, weightScales: Float32Array): { values: Int32Array; scales: Float32Array } {
  const scales = Float32Array.from(weightScales, (w) => w * inputScale);
  const values = Int32Array.from(bias, (b, c) => Math.round(b / scales[c]!));
  return { values, scales };
}
