// One side of `npm run bench`, run in its own child process so that its peak RSS is its own:
// either our removeBackground() or the peer's, on the same encoded images held in memory.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { benchDataDir, type BenchImage } from './images.ts';

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

export type Job = LatencyJob | ThroughputJob;

export interface Sample {
  name: string;
  group: string;
  ms: number;
  timings: Record<string, number>;
  /** The process's minor page faults and system CPU time (all its threads) during this image. */
  pageFaults: number;
  systemMs: number;
}

export interface JobResult {
  coldMs: number;
  samples: Sample[];
  imagesPerMinute: number;
  peakRssMb: number;
}

type Remove = (input: Buffer, type: string) => Promise<{ bytes: number; timings: Record<string, number> }>;

async function loadOurs(precision: 'standard' | 'high', concurrency: number): Promise<Remove> {
  const { loadConfig } = await import('../src/config.ts');
  const { segmenterOptions } = await import('../src/worker/start-worker.ts');
  const { loadSegmenter, removeBackground } = await import('../src/vision/remove-background.ts');
  const config = loadConfig({ CUTOUT_WORKER_CONCURRENCY: String(concurrency), CUTOUT_DATA_DIR: benchDataDir });
  const segmenter = await loadSegmenter(segmenterOptions(config));
  return async (input) => {
    const result = await removeBackground(segmenter, input, { subject: 'product', precision, format: 'png', maxPixels: config.maxPixels });
    return { bytes: result.data.length, timings: result.timings };
  };
}

async function loadPeer(): Promise<Remove> {
  const peer = await import('@imgly/background-removal-node');
  const entry = createRequire(import.meta.url).resolve('@imgly/background-removal-node');
  const publicPath = `file://${path.dirname(entry)}/`;
  return async (input, type) => {
    const blob = await peer.removeBackground(new Blob([new Uint8Array(input)], { type }), { publicPath, model: 'medium', output: { format: 'image/png' } });
    return { bytes: (await blob.arrayBuffer()).byteLength, timings: {} };
  };
}

const mimeTypes: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp' };

async function run(job: Job): Promise<JobResult> {
  const inputs = job.images.map((image) => ({ image, data: fs.readFileSync(image.file), type: mimeTypes[path.extname(image.file)] ?? 'image/png' }));
  const started = performance.now();
  const concurrency = job.kind === 'throughput' ? job.concurrency : 1;
  const remove = job.side === 'peer' ? await loadPeer() : await loadOurs(job.side === 'ours-high' ? 'high' : 'standard', concurrency);
  await remove(inputs[0]!.data, inputs[0]!.type);
  const coldMs = performance.now() - started;

  const samples: Sample[] = [];
  let imagesPerMinute = Number.NaN;
  if (job.kind === 'latency') {
    for (let pass = 0; pass < job.runs; pass++) {
      for (const { image, data, type } of inputs) {
        const before = process.resourceUsage();
        const t = performance.now();
        const { timings } = await remove(data, type);
        const ms = performance.now() - t;
        const after = process.resourceUsage();
        samples.push({
          name: image.name,
          group: image.group,
          ms,
          timings,
          pageFaults: after.minorPageFault - before.minorPageFault,
          systemMs: (after.systemCPUTime - before.systemCPUTime) / 1000,
        });
      }
    }
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
