// Activation ranges for the INT8 graph, measured by `npm run calibrate` on the fixtures, and the
// quantisation parameters derived from them.
import fs from 'node:fs';
import { z } from 'zod';

const rangeSchema = z
  .object({
    min: z.number(),
    max: z.number(),
    /** The ranges file's `percentile` quantiles: `low` of 100 − percentile, `high` of percentile. */
    low: z.number(),
    high: z.number(),
  })
  .refine((r) => r.min <= r.low && r.low <= r.high && r.high <= r.max, 'expected min ≤ low ≤ high ≤ max');

export const rangesSchema = z.object({
  percentile: z.number().gt(50).lte(100),
  /** The fixtures the ranges were measured on. */
  images: z.array(z.string()).min(1),
  tensors: z.record(z.string(), rangeSchema),
});

export type TensorRange = z.infer<typeof rangeSchema>;
export type ActivationRanges = z.infer<typeof rangesSchema>;

/** The committed ranges, next to this module so that the build carries them. */
export const rangesFile = new URL('./int8-ranges.json', import.meta.url);

export function readRanges(file: URL | string = rangesFile): ActivationRanges {
  return rangesSchema.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
}

export type ActivationType = 'uint8' | 'int8';
/** Which measured range a tensor is quantised over: everything seen, or the percentile band. */
export type RangeKind = 'minmax' | 'percentile';

export interface QuantParams {
  scale: number;
  zeroPoint: number;
}

/**
 * Asymmetric parameters covering `range`, widened to include 0 so that zero (Relu's floor, the
 * padding of every convolution) is represented exactly. A Relu output gets the type's lowest value
 * as zero point, which is what lets onnxruntime drop the Relu into the QLinearConv.
 */
export function quantParams(range: TensorRange, kind: RangeKind, type: ActivationType): QuantParams {
  const lo = Math.min(0, kind === 'minmax' ? range.min : range.low);
  const hi = Math.max(0, kind === 'minmax' ? range.max : range.high);
  const scale = hi > lo ? (hi - lo) / 255 : 1;
  const lowest = type === 'uint8' ? 0 : -128;
  const zeroPoint = Math.min(lowest + 255, Math.max(lowest, lowest + Math.round(-lo / scale)));
  return { scale, zeroPoint };
}
