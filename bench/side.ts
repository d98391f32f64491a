// One side of `npm run bench`, run in its own child process so that its peak RSS is its own:
// either our removeBackground() or the peer's, on the same encoded images held in memory.
import fs from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import type { PlaneSet } from '../src/vision/shared-planes.ts';
import { benchDataDir, type BenchImage } from './images.ts';
import { imageType, loadPeer } from './peer-remove.ts';

export type Side = 'ours-standard' | 'ours-high' | 'peer';

export interface LatencyJob {
  kind: 'latency';
  side: Side;
  images: BenchImage[];
  /** Passes over each image after the cold one. */
  runs: number;
}

export interface ThroughputJob {
  kind: 'throughput';
  side: Side;
  images: BenchImage[];
  concurrency: number;
}

/** Our ways to a PNG from the same matte, in turn: the band threads' compression (as shipped, with every block counted in full, with zlib), and the RGBA joined then encoded by sharp (libpng, zlib level 1) as before. */
export interface PngJob {
  kind: 'png';
  side: 'ours-standard';
  images: BenchImage[];
  runs: number;
}

/**
 * Our side held ready to run one image at a time when told (`{ step: i }`, a sample back each time,
 * `{ done: true }` to finish): the parent alternates several such processes, run under different
 * settings, image by image, so that a load that changes during the run slows them alike.
 */
export interface StepsJob {
  kind: 'steps';
  side: 'ours-standard';
  images: BenchImage[];
}

export type Job = LatencyJob | ThroughputJob | PngJob | StepsJob;
export type StepRequest = { step: number } | { done: true };
export type StepReply = { ready: true } | { sample: Sample };

export interface PngSample {
  group: string;
  bandsMs: number;
  bandsBytes: number;
  countedMs: number;
  countedBytes: number;
  zlibMs: number;
  zlibBytes: number;
  sharpMs: number;
  sharpBytes: number;
}

export interface Sample {
  name: string;
  group: string;
  ms: number;
  timings: Record<string, number>;
  /** The process's minor page faults and system CPU time (all its threads) during this image. */
  pageFaults: number;
  systemMs: number;
  /** The main thread's garbage collections during this image: their count and pauses in ms. */
  collections: number;
  collectingMs: number;
}

export interface JobResult {
  coldMs: number;
  samples: Sample[];
  pngSamples?: PngSample[];
  imagesPerMinute: number;
  peakRssMb: number;
}

type Remove = (input: Buffer, type: string) => Promise<{ bytes: number; timings: Record<string, number> }>;

/** Our model session as the worker builds it, on the bench's data folder. */
async function ourSegmenter(concurrency: number) {
  const { loadConfig } = await import('../src/config.ts');
  const { segmenterOptions } = await import('../src/worker/start-worker.ts');
  const { loadSegmenter } = await import('../src/vision/remove-background.ts');
  const config = loadConfig({ CUTOUT_WORKER_CONCURRENCY: String(concurrency), CUTOUT_DATA_DIR: benchDataDir });
  return { config, segmenter: await loadSegmenter(segmenterOptions(config)) };
}

async function loadOurs(precision: 'standard' | 'high', concurrency: number): Promise<Remove> {
  const { removeBackground } = await import('../src/vision/remove-background.ts');
  const { config, segmenter } = await ourSegmenter(concurrency);
  return async (input) => {
    const result = await removeBackground(segmenter, input, { subject: 'product', precision, format: 'png', maxPixels: config.maxPixels });
    return { bytes: result.data.length, timings: result.timings };
  };
}

async function peerSide(): Promise<Remove> {
  const remove = await loadPeer();
  return async (input, type) => ({ bytes: (await remove(input, type)).length, timings: {} });
}

async function comparePngEncoders(job: PngJob): Promise<JobResult> {
  const { decodeImage } = await import('../src/vision/decode.ts');
  const { computeMatte } = await import('../src/vision/matte.ts');
  const { decodedPhoto } = await import('../src/vision/photo.ts');
  const { recipeFor } = await import('../src/vision/recipe.ts');
  const { sharedPlanes } = await import('../src/vision/shared-planes.ts');
  const { composeCutout, compressBands } = await import('../src/vision/cutout-bands.ts');
  const { assemblePng } = await import('../src/vision/png-file.ts');
  const { default: sharp } = await import('sharp');
  const { config, segmenter } = await ourSegmenter(1);
  const pngSamples: PngSample[] = [];
  for (const image of job.images) {
    const decoded = await decodeImage(fs.readFileSync(image.file), config.maxPixels);
    const planes = sharedPlanes();
    const matte = await computeMatte(segmenter, decodedPhoto(decoded), recipeFor('product', 'standard', decoded.width, decoded.height), undefined, planes);
    const { width, height } = decoded;
    // Each encoding takes the photo's rows in a set of its own, given back after it, as a task's are.
    const timed = async (make: (rows: PlaneSet) => Promise<Buffer>): Promise<[number, number]> => {
      const rows = sharedPlanes();
      const t = performance.now();
      const bytes = (await make(rows)).length;
      const ms = performance.now() - t;
      rows.release();
      return [ms, bytes];
    };
    // One unmeasured round first: the threads' kernels and zlib warm up.
    for (let r = -1; r < job.runs; r++) {
      const [bandsMs, bandsBytes] = await timed(async (rows) => assemblePng(width, height, await compressBands(decoded, matte, rows)));
      const [countedMs, countedBytes] = await timed(async (rows) => assemblePng(width, height, await compressBands(decoded, matte, rows, 'counted')));
      const [zlibMs, zlibBytes] = await timed(async (rows) => assemblePng(width, height, await compressBands(decoded, matte, rows, 'zlib')));
      const [sharpMs, sharpBytes] = await timed(async (rows) => sharp(await composeCutout(decoded, matte, rows), { raw: { width, height, channels: 4 } }).png({ compressionLevel: 1 }).toBuffer());
      if (r >= 0) pngSamples.push({ group: image.group, bandsMs, bandsBytes, countedMs, countedBytes, zlibMs, zlibBytes, sharpMs, sharpBytes });
    }
    planes.release();
  }
  return { coldMs: Number.NaN, samples: [], pngSamples, imagesPerMinute: Number.NaN, peakRssMb: process.resourceUsage().maxRSS / 1024 };
}

type Input = { image: BenchImage; data: Buffer; type: string };

/** Runs one image at a time and measures it: its time, page faults, system CPU and the main thread's collections. */
function measuring(remove: Remove): { measure: (input: Input) => Promise<Sample>; stop: () => void } {
  let collections = 0;
  let collectingMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      collections++;
      collectingMs += entry.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const measure = async ({ image, data, type }: Input): Promise<Sample> => {
    const before = process.resourceUsage();
    const beforeCollections = collections, beforeCollectingMs = collectingMs;
    const t = performance.now();
    const { timings } = await remove(data, type);
    const ms = performance.now() - t;
    const after = process.resourceUsage();
    // The observer hears of a collection on a later turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    return {
      name: image.name,
      group: image.group,
      ms,
      timings,
      pageFaults: after.minorPageFault - before.minorPageFault,
      systemMs: (after.systemCPUTime - before.systemCPUTime) / 1000,
      collections: collections - beforeCollections,
      collectingMs: collectingMs - beforeCollectingMs,
    };
  };
  return { measure, stop: () => observer.disconnect() };
}

/**
 * Each image once, unmeasured: the first run at a larger size than any before it is slower (the
 * threads' WebAssembly memory and the allocator grow, among other first-time costs), and a latency
 * that is meant warm must not count it.
 */
async function warmUp(inputs: Input[], remove: Remove): Promise<void> {
  for (const input of new Map(inputs.map((i) => [i.image.file, i])).values()) await remove(input.data, input.type);
}

/** Steps (StepsJob) until told it is done, each step warm (warmUp). */
async function steps(inputs: Input[], remove: Remove): Promise<void> {
  await warmUp(inputs, remove);
  const { measure, stop } = measuring(remove);
  const send = (reply: StepReply) => process.send?.(reply);
  await new Promise<void>((resolve) => {
    process.on('message', (request: StepRequest) => {
      if ('done' in request) {
        process.removeAllListeners('message');
        resolve();
      } else {
        void measure(inputs[request.step]!).then((sample) => send({ sample }));
      }
    });
    send({ ready: true });
  });
  stop();
}

async function run(job: Job): Promise<JobResult> {
  if (job.kind === 'png') return comparePngEncoders(job);
  const inputs: Input[] = job.images.map((image) => ({ image, data: fs.readFileSync(image.file), type: imageType(image.file) }));
  const started = performance.now();
  const concurrency = job.kind === 'throughput' ? job.concurrency : 1;
  const remove = job.side === 'peer' ? await peerSide() : await loadOurs(job.side === 'ours-high' ? 'high' : 'standard', concurrency);
  await remove(inputs[0]!.data, inputs[0]!.type);
  const coldMs = performance.now() - started;

  const samples: Sample[] = [];
  let imagesPerMinute = Number.NaN;
  if (job.kind === 'steps') {
    await steps(inputs, remove);
  } else if (job.kind === 'latency') {
    await warmUp(inputs, remove);
    const { measure, stop } = measuring(remove);
    for (let pass = 0; pass < job.runs; pass++) for (const input of inputs) samples.push(await measure(input));
    stop();
  } else {
    // Like the worker: `concurrency` slots, each taking the next image as soon as it is free.
    let next = 0;
    const t = performance.now();
    const slot = async (): Promise<void> => {
      while (next < inputs.length) {
        const { data, type } = inputs[next++]!;
        await remove(data, type);
      }
    };
    await Promise.all(Array.from({ length: job.concurrency }, slot));
    imagesPerMinute = (inputs.length / (performance.now() - t)) * 60_000;
  }
  return { coldMs, samples, imagesPerMinute, peakRssMb: process.resourceUsage().maxRSS / 1024 };
}

const job = JSON.parse(process.argv[2] ?? '') as Job;
const result = await run(job);
process.send?.(result);
