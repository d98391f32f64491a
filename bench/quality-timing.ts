// Side sections of the quality benchmark: the cost of refinement and decontamination on a 12 MP
// photo, peak memory at the pixel cap, and stretching against padding on 10:1 panoramas.
import sharp from 'sharp';
import { decodeImage } from '../src/vision/decode.ts';
import type { Segmenter } from '../src/vision/model.ts';
import { recipeFor, type Recipe } from '../src/vision/recipe.ts';
import { removeBackground, type RemovalResult } from '../src/vision/remove-background.ts';
import { mean, prepareTruth, score } from './quality-metrics.ts';
import { baselineCutout, ourCutout } from './quality-run.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Upscales `photo` to `width` × `height` as a JPEG, the kind of file a phone produces. */
export async function bigJpeg(photo: string | Buffer, width: number, height: number): Promise<Buffer> {
  return sharp(photo).resize(width, height, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
}

export async function time12mp(segmenter: Segmenter, photo: string, rounds = 5): Promise<void> {
  const input = await bigJpeg(photo, 4000, 3000);
  const shipped = recipeFor('auto', 'standard', 4000, 3000);
  const plain: Recipe = { ...shipped, refine: null, decontaminate: false };
  const recipes = { 'standard (refine + decontaminate)': shipped, 'standard without them': plain };
  const runs = new Map<string, RemovalResult[]>();
  await removeBackground(segmenter, input, { subject: 'auto', precision: 'standard', format: 'png', maxPixels: 50_000_000 }); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const [label, recipe] of Object.entries(recipes)) {
      const started = performance.now();
      const result = await removeBackground(segmenter, input, { subject: 'auto', precision: 'standard', format: 'png', maxPixels: 50_000_000, recipe });
      runs.set(label, [...(runs.get(label) ?? []), { ...result, timings: { ...result.timings, total: performance.now() - started } as RemovalResult['timings'] }]);
    }
  }
  console.log(`\n=== 12 MP end to end (4000×3000 JPEG, PNG out, median of ${rounds} alternating runs; shared noisy machine) ===`);
  const totals: number[] = [];
  for (const [label, results] of runs) {
    const stages = Object.keys(results[0]!.timings);
    const cells = stages.map((s) => `${s} ${median(results.map((r) => (r.timings as Record<string, number>)[s]!)).toFixed(0)}`);
    totals.push(median(results.map((r) => (r.timings as Record<string, number>).total!)));
    console.log(`${label.padEnd(36)} ${cells.join('  ')} ms`);
  }
  console.log(`refinement + decontamination add ${((100 * (totals[0]! - totals[1]!)) / totals[1]!).toFixed(1)}% to standard end to end`);
}

export async function largeImage(segmenter: Segmenter, photo: string): Promise<void> {
  const input = await bigJpeg(photo, 8660, 5770);
  const before = process.memoryUsage().rss;
  const result = await removeBackground(segmenter, input, { subject: 'auto', precision: 'high', format: 'png', maxPixels: 50_000_000 });
  console.log(`\n=== 50 MP (8660×5770) high: ${JSON.stringify(result.timings)} ms; RSS before ${(before / 2 ** 20).toFixed(0)} MiB, peak ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB ===`);
}

/** Widens a photo to 10:1 by repeating its edge columns, so the subject sits in a wide scene. */
async function widen(file: string, channels: 1 | 3): Promise<{ data: Buffer; width: number; height: number }> {
  const { height = 1, width = 1 } = await sharp(file).metadata();
  const side = Math.ceil((10 * height - width) / 2);
  const image = sharp(file).extend({ left: side, right: side, extendWith: 'copy' });
  const out = channels === 1 ? image.extractChannel(0) : image.removeAlpha().toColourspace('srgb');
  const { data, info } = await out.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

export async function panoramaComparison(segmenter: Segmenter, reference: Segmenter, photos: string[], truths: string[]): Promise<void> {
  console.log('\n=== 10:1 panoramas (fixtures widened with their edge columns), standard: stretch vs pad ===');
  const rows: Record<string, ReturnType<typeof score>[]> = { baseline: [], stretch: [], pad: [] };
  for (let i = 0; i < photos.length; i++) {
    const photo = await widen(photos[i]!, 3);
    const gt = await widen(truths[i]!, 1);
    const png = await sharp(photo.data, { raw: { width: photo.width, height: photo.height, channels: 3 } }).png().toBuffer();
    const image = await decodeImage(png, 100_000_000);
    const truth = prepareTruth(gt.data, image.pixels, image.channels, image.width, image.height);
    rows.baseline!.push(score(truth, await baselineCutout(reference, image)));
    for (const geometry of ['stretch', 'pad'] as const) {
      const recipe = { ...recipeFor('auto', 'standard', image.width, image.height), passes: [{ geometry, mirrored: false }] };
      rows[geometry]!.push(score(truth, await ourCutout(segmenter, image, recipe)));
    }
  }
  for (const [label, scores] of Object.entries(rows)) {
    const m = mean(scores);
    console.log(`${label.padEnd(10)} IoU ${m.iou.toFixed(4)}  bIoU ${m.boundaryIou.toFixed(4)}  MAE ${m.mae.toFixed(4)}  halo ${m.halo.toFixed(2)}`);
  }
}
