// Quality benchmark: our cutouts against the baseline (what the peer does with the same model) and
// the ground truth. `npm run bench:quality -- --set ../shared/fixtures [--variants a,b] [--time-12mp] [--large] [--panorama] [--only name,…] [--upscale f] [--peer]`
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { precisions, subjects, type Subject } from '../src/domain/removal-request.ts';
import { decodeImage } from '../src/vision/decode.ts';
import { loadSegmenter, startSegmenter } from '../src/vision/model.ts';
import { loadPeer, peerCutout } from './peer-remove.ts';
import { alphaDistance, higherIsBetter, mean, metricNames, prepareTruth, score, type Scores } from './quality-metrics.ts';
import { baselineCutout, cachingSegmenter, openedPixels, ourCutout } from './quality-run.ts';
import { contactSheet, type SheetRow } from './quality-sheet.ts';
import { bigJpeg, largeImage, panoramaComparison, time12mp } from './quality-timing.ts';
import { experiments, shipped, type Variant } from './quality-variants.ts';
import sharp from 'sharp';
import { z } from 'zod';

const { values } = parseArgs({
  options: {
    set: { type: 'string', default: '../shared/fixtures' },
    variants: { type: 'string', default: '' },
    only: { type: 'string', default: '' },
    'time-12mp': { type: 'boolean', default: false },
    panorama: { type: 'boolean', default: false },
    large: { type: 'boolean', default: false },
    out: { type: 'string', default: 'artifacts' },
    upscale: { type: 'string', default: '1' },
    graph: { type: 'string', default: 'int8' },
    peer: { type: 'boolean', default: false },
  },
});

/**
 * `--upscale f`: every photo enlarged f times, as a JPEG (what a phone sends), and scored against its
 * ground truth enlarged with it: the pipeline on photos of megapixels, scored on the same masks (the fixtures are under 0.5 MP).
 */
const upscale = z.coerce.number().min(1).max(10).parse(values.upscale);

/**
 * `--graph fp32`: our recipes on the fp32 graph (the baseline's) instead of the product's INT8 one,
 * which tells how much of a recipe's difference from the baseline the quantisation costs or makes.
 */
const graph = z.enum(['int8', 'fp32']).parse(values.graph);

/**
 * `--peer`: the peer's own removeBackground() on each photo too, scored like the rest, with the mean
 * distance of each baseline's alpha from the peer's: how faithfully the baseline stands for the peer.
 */
const peer = values.peer ? await loadPeer() : null;
if (peer && upscale !== 1) throw new Error('--peer scores the photos as they are: leave out --upscale');

async function enlarged(photo: Buffer, factor: number): Promise<Buffer> {
  const { width = 1, height = 1 } = await sharp(photo).metadata();
  return bigJpeg(photo, Math.round(width * factor), Math.round(height * factor));
}

interface Entry {
  name: string;
  kind: string;
  gt_type: string;
  image: string;
  gt: string;
}

/** Which fixture kinds each subject is meant for: its rows are averaged over those. */
const subjectKinds: Record<Subject, string[]> = { auto: [], product: ['product'], portrait: ['portrait'], hair: ['hair'] };

const set = path.resolve(values.set);
const manifestPath = path.join(set, 'manifest.json');
let entries: Entry[] = fs.existsSync(manifestPath)
  ? (JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as Entry[])
  : fs.readdirSync(path.join(set, 'images')).sort().map((file) => {
      const name = path.parse(file).name;
      return { name, kind: 'unknown', gt_type: 'unknown', image: `images/${file}`, gt: `gt/${name}.png` };
    });
if (values.only) entries = entries.filter((e) => values.only.split(',').includes(e.name));

const variants: Variant[] = [];
for (const precision of precisions) for (const subject of subjects) variants.push(shipped(subject, precision));
for (const name of values.variants.split(',').filter(Boolean)) {
  const found = experiments[name];
  if (!found) throw new Error(`unknown variant ${name}; known: ${Object.keys(experiments).join(', ')}`);
  variants.push(found);
}

// Ours runs the product's session (static INT8) unless `--graph fp32`; the baseline, what the peer
// does, runs the same weights in fp32, as the peer's session computes them.
const reference = cachingSegmenter(await startSegmenter({ threads: 2, graph: 'fp32' }));
const model = graph === 'int8' ? await loadSegmenter({ threads: 2 }) : reference;
const segmenter = graph === 'int8' ? cachingSegmenter(model) : reference;
/** How far each baseline's alpha lies from the peer's own (`--peer`), mean levels of 0–255. */
interface Distance {
  baseline: number;
  centred: number;
}
const results: { entry: Entry; baseline: Scores; centred: Scores; references: Map<string, Scores>; ours: Map<string, Scores>; distance?: Distance }[] = [];
const sheet: SheetRow[] = [];
const fmt = (s: Scores) => `${s.iou.toFixed(4)} ${s.boundaryIou.toFixed(4)} ${s.mae.toFixed(4)} ${s.sad.toFixed(2).padStart(7)} ${s.halo.toFixed(2).padStart(6)}`;
const diff = (s: Scores, b: Scores) =>
  metricNames.map((k) => {
    const d = s[k] - b[k];
    const good = higherIsBetter[k] ? d > 0 : d < 0;
    return `${d >= 0 ? '+' : ''}${d.toFixed(k === 'sad' || k === 'halo' ? 2 : 4)}${Math.abs(d) < 1e-9 ? ' ' : good ? '✓' : '✗'}`.padStart(10);
  }).join('');
const header = (against = 'baseline') => `${'variant'.padEnd(24)}IoU    bIoU   MAE        SAD   halo%   |  Δ vs ${against}: IoU bIoU MAE SAD halo`;

console.log(
  `quality benchmark on ${set}: ${entries.length} images${upscale === 1 ? '' : `, each enlarged ${upscale}× (JPEG) with its ground truth`}; ours on the ${graph === 'int8' ? "product's INT8 session" : 'fp32 graph'}, ` +
    "baselines on the fp32 graph (baseline: resampled as the peer does; centred baseline: the same pass resampled at pixel centres); boundary band 2% of the diagonal; SAD in thousands; halo = % of the edge band showing old background",
);
for (const entry of entries) {
  const original = fs.readFileSync(path.join(set, entry.image));
  // An enlarged photo is opened from its bytes as the service opens a phone's JPEG (ourCutout).
  const encoded = upscale === 1 ? undefined : await enlarged(original, upscale);
  const image = await decodeImage(encoded ?? original, openedPixels);
  const gt = await sharp(path.join(set, entry.gt)).resize(image.width, image.height, { fit: 'fill' }).extractChannel(0).raw().toBuffer();
  const truth = prepareTruth(gt, image.pixels, image.channels, image.width, image.height);
  const baselineRgba = await baselineCutout(reference, image);
  const baseline = score(truth, baselineRgba);
  const centredRgba = await baselineCutout(reference, image, 'centred');
  const centred = score(truth, centredRgba);
  const references = new Map([['centred baseline', centred]]);
  let distance: Distance | undefined;
  if (peer) {
    const peerRgba = await peerCutout(peer, original, entry.image);
    references.set('peer itself', score(truth, peerRgba));
    distance = { baseline: alphaDistance(peerRgba, baselineRgba), centred: alphaDistance(peerRgba, centredRgba) };
  }
  const ours = new Map<string, Scores>();
  let shown: Uint8Array = baselineRgba;
  for (const variant of variants) {
    const rgba = await ourCutout(segmenter, image, variant.recipe(image.width, image.height), encoded);
    ours.set(variant.label, score(truth, rgba));
    if (variant.label === 'high') shown = rgba;
  }
  segmenter.clear();
  reference.clear();
  results.push({ entry, baseline, centred, references, ours, distance });
  sheet.push({ name: entry.name, image, gt, baseline: baselineRgba, ours: shown });
  console.log(`\n${entry.name} (${entry.kind}, ${entry.gt_type}, ${image.width}×${image.height})\n${header()}`);
  console.log(`${'baseline'.padEnd(24)}${fmt(baseline)}`);
  for (const [label, s] of [...references, ...ours]) console.log(`${label.padEnd(24)}${fmt(s)}  | ${diff(s, baseline)}`);
  if (distance) console.log(`mean |alpha − the peer's alpha|, levels: baseline ${distance.baseline.toFixed(3)}, centred baseline ${distance.centred.toFixed(3)}`);
}

/** Means of the rows, each variant against `against` (the baseline unless the centred one is named). */
function summary(title: string, rows: typeof results, labels: string[], against: 'baseline' | 'centred' = 'baseline'): void {
  if (rows.length === 0) return;
  const base = mean(rows.map((r) => r[against]));
  const name = against === 'baseline' ? 'baseline' : 'centred baseline';
  console.log(`\n${title} (${rows.length} images: ${rows.map((r) => r.entry.name).join(' ')})\n${header(name)}`);
  console.log(`${name.padEnd(24)}${fmt(base)}`);
  const shown = against === 'baseline' ? [...rows[0]!.references.keys()].map((label) => ({ label, pick: (r: (typeof rows)[number]) => r.references.get(label)! })) : [];
  for (const label of labels) shown.push({ label, pick: (r) => r.ours.get(label)! });
  for (const { label, pick } of shown) {
    const m = mean(rows.map(pick));
    const maeCut = (100 * (base.mae - m.mae)) / base.mae;
    console.log(`${label.padEnd(24)}${fmt(m)}  | ${diff(m, base)}   MAE ${maeCut >= 0 ? "−" : "+"}${Math.abs(maeCut).toFixed(1)}%`);
  }
}

const labels = variants.map((v) => v.label);
console.log('\n=== means ===');
summary('all images', results, labels);
summary('all images, against the centred baseline', results, labels, 'centred');
const distances = results.flatMap((r) => (r.distance ? [r.distance] : []));
if (distances.length > 0) {
  const average = (pick: (d: Distance) => number) => (distances.reduce((sum, d) => sum + pick(d), 0) / distances.length).toFixed(3);
  console.log(`\nmean |alpha − the peer's alpha| over the photos, levels: baseline ${average((d) => d.baseline)}, centred baseline ${average((d) => d.centred)}`);
}
summary('soft-alpha ground truth', results.filter((r) => r.entry.gt_type === 'soft_alpha'), labels);
for (const subject of subjects) {
  const kinds = subjectKinds[subject];
  if (kinds.length === 0) continue;
  const rows = results.filter((r) => kinds.includes(r.entry.kind));
  if (rows.length === 0) console.log(`\nsubject ${subject}: no fixtures of kind ${kinds.join('/')} in this set`);
  summary(`subject ${subject} on kind ${kinds.join('/')}`, rows, labels.filter((l) => l.endsWith(`/${subject}`) || !l.includes('/')));
}
for (const kind of [...new Set(results.map((r) => r.entry.kind))].filter((k) => !Object.values(subjectKinds).flat().includes(k))) {
  summary(`kind ${kind} (no subject for it: auto)`, results.filter((r) => r.entry.kind === kind), labels.filter((l) => !l.includes('/')));
}
console.log(`\nmodel passes run: ${segmenter.passes}`);

fs.mkdirSync(values.out, { recursive: true });
const sheetPath = path.join(values.out, `quality-${path.basename(set)}.png`);
await contactSheet(sheet, sheetPath);
console.log(`contact sheet: ${sheetPath} (photo | ground truth | baseline | high | baseline on colour | high on colour)`);

if (values.panorama) await panoramaComparison(segmenter, reference, entries.map((e) => path.join(set, e.image)), entries.map((e) => path.join(set, e.gt)));
if (values['time-12mp']) await time12mp(model, path.join(set, entries[0]!.image));
if (values.large) await largeImage(model, path.join(set, entries[0]!.image));
