// The static INT8 rows of `npm run bench:inference`: the fp32 product graph quantised by
// src/vision/int8-graph.ts with ranges from src/vision/int8-ranges.json (`npm run calibrate`, all 14
// fixtures), and one graph calibrated on half of the fixtures and scored on the other half, since
// ranges measured on the very images they are scored on flatter the result.
import path from 'node:path';
import onnxProto from 'onnx-proto';
import { int8WeightLimit } from '../src/vision/int8-cpu.ts';
import { quantiseGraph, type Int8Options } from '../src/vision/int8-graph.ts';
import { readRanges, type ActivationRanges } from '../src/vision/int8-ranges.ts';
import { productInt8 } from '../src/vision/model-session.ts';
import { highSecondSide } from '../src/vision/recipe.ts';
import { calibrate, calibrationPercentile } from './calibration.ts';
import { fixturesDir, readManifest } from './images.ts';
import type { Variant } from './model-variants.ts';

/** The first Conv (it reads the image) and the last one before the mask's logits. */
function firstAndLastConvs(fp32: Uint8Array): Set<string> {
  const nodes = onnxProto.onnx.ModelProto.decode(fp32).graph!.node!;
  const relu = new Set(nodes.filter((n) => n.opType === 'Relu').map((n) => n.input![0]!));
  const convs = nodes.filter((n) => n.opType === 'Conv');
  return new Set([convs[0]!.name!, convs.filter((c) => relu.has(c.output![0]!)).at(-1)!.name!]);
}

/** The row of the graph the product runs (src/vision/model-session.ts). */
export const int8ProductRow = `INT8 QDQ, u8 activations, ${calibrationPercentile} % percentile`;
/** The product's graph as it was before it took any input side (model-graph.ts, anySide): each Resize sized for 1024. */
export const int8FixedSizesRow = `INT8 QDQ, u8, ${calibrationPercentile} % percentile, Resize sizes fixed for 1024`;
/** The product's graph at the side of high's mirrored view (recipe.ts). */
export const int8SecondSideRow = `INT8 QDQ, u8, ${calibrationPercentile} % percentile, at ${highSecondSide}`;
/** The Concat ranges the product does not use (model-session.ts, productInt8). */
const otherConcatRanges = productInt8.concatRanges === 'shared' ? 'own' : 'shared';
/** The product's graph with the other Concat ranges (int8-graph.ts, concatRanges). */
export const int8OtherConcatRow = `INT8 QDQ, u8, ${calibrationPercentile} % percentile, Concats over ${otherConcatRanges === 'own' ? 'their own ranges' : 'one shared range'}`;

/** `fixedSizes`: the fp32 graph before the anySide edit. */
export function int8Variants(fp32: () => Promise<Uint8Array>, fixedSizes: () => Promise<Uint8Array>): Variant[] {
  type Options = Omit<Int8Options, 'keepFloat' | 'weightLimit' | 'concatRanges'> & Partial<Pick<Int8Options, 'weightLimit' | 'concatRanges'>> & { keepEnds?: boolean; side?: number; source?: () => Promise<Uint8Array> };
  const int8 = (name: string, options: Options, ranges: () => ActivationRanges | Promise<ActivationRanges> = readRanges, fixtures?: string[]): Variant => ({
    name,
    side: options.side ?? 1024,
    fixtures,
    model: async () => {
      const graph = await (options.source ?? fp32)();
      return quantiseGraph(graph, await ranges(), { ...options, weightLimit: options.weightLimit ?? 127, concatRanges: options.concatRanges ?? productInt8.concatRanges, keepFloat: options.keepEnds ? firstAndLastConvs(graph) : undefined });
    },
  });
  const manifest = readManifest();
  const calibrationHalf = manifest.filter((_, i) => i % 2 === 0);
  const heldOut = manifest.filter((_, i) => i % 2 === 1).map((m) => m.name);
  const halfRanges = async () => calibrate(await fp32(), calibrationHalf.map((m) => ({ name: m.name, file: path.join(fixturesDir, m.image) })), calibrationPercentile, 2);
  const percentile = `${calibrationPercentile} % percentile`;
  return [
    int8('INT8 QDQ, u8 activations, min/max', { activations: 'uint8', range: 'minmax' }),
    int8(int8ProductRow, { activations: 'uint8', range: 'percentile' }),
    int8(int8FixedSizesRow, { activations: 'uint8', range: 'percentile', source: fixedSizes }),
    int8(int8SecondSideRow, { activations: 'uint8', range: 'percentile', side: highSecondSide }),
    int8(int8OtherConcatRow, { activations: 'uint8', range: 'percentile', concatRanges: otherConcatRanges }),
    int8(`INT8 QDQ, s8 activations, ${percentile}`, { activations: 'int8', range: 'percentile' }),
    int8(`INT8 QDQ, u8, ${percentile}, first and last Conv in fp32`, { activations: 'uint8', range: 'percentile', keepEnds: true }),
    // Where this CPU's multiply would saturate ±127 weights (no VNNI: int8-cpu.ts), the range it multiplies exactly.
    ...(int8WeightLimit() === 127 ? [] : [int8(`INT8 QDQ, u8, ${percentile}, weights ±${int8WeightLimit()}`, { activations: 'uint8', range: 'percentile', weightLimit: int8WeightLimit() })]),
    { name: 'product graph (fp32), held-out 7 fixtures', side: 1024, fixtures: heldOut, model: fp32 },
    int8(`INT8 QDQ, u8, ${percentile} of the other 7, held-out 7`, { activations: 'uint8', range: 'percentile' }, halfRanges, heldOut),
  ];
}
