// `npm run bench:soak`: 500 tasks (100 with --quick) through the real service's worker process
// (SQLite, in-process worker, images from a loopback server), printing the worker process's RSS and
// its page faults per task as the tasks complete. The peak must stay under 1 GB and the RSS flat
// after warm-up.
// `--concurrency N` and `--threads N` set the worker; it runs with `npm start`'s allocator settings
// (src/allocator-env.ts), and `--env NAME=VALUE` passes an environment variable to it (e.g.
// MALLOC_MMAP_THRESHOLD_=33554432) to compare others. `--precision high` or `mixed` (every other
// task at high) asks for high precision, whose larger second view (recipe.ts) takes more memory.
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { withAllocatorEnv } from '../src/allocator-env.ts';
import { precisions, type Precision } from '../src/domain/removal-request.ts';
import { benchImages } from './images.ts';
import { ServerUnderTest, startImageServer, type Report } from './service.ts';
import { fixed, printTable } from './stats.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    tasks: { type: 'string' },
    concurrency: { type: 'string', default: '1' },
    threads: { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
    precision: { type: 'string', default: 'standard' },
  },
});
// Checked before any server starts.
const precision = z.enum([...precisions, 'mixed']).parse(values.precision);
const precisionOf = (i: number): Precision => (precision === 'mixed' ? (i % 2 === 0 ? 'standard' : 'high') : precision);
const total = Number(values.tasks ?? (values.quick ? 100 : 500));
const env = Object.fromEntries(values.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const overrides: Record<string, string> = { CUTOUT_WORKER_CONCURRENCY: values.concurrency };
if (values.threads) overrides.CUTOUT_INFERENCE_THREADS = values.threads;

async function main(): Promise<void> {
  const images = await benchImages();
  // Mostly the fixtures, with a 2 MP and a 12 MP photo in the mix so large buffers come and go.
  const photos = images.map((i) => fs.readFileSync(i.file));
  const imageServer = await startImageServer(photos);
  const server = await ServerUnderTest.start(overrides, env);
  console.log(`cutout bench:soak: ${total} tasks (${precision}), worker concurrency ${values.concurrency}, threads ${values.threads ?? 'auto'}, ` +
    `env ${JSON.stringify(withAllocatorEnv(env))}; ${os.cpus().length} cores; other processes may compete for the CPU\n`);
  const started = Date.now();
  const samples: { done: number; seconds: number; report: Report }[] = [];
  try {
    for (let i = 0; i < total; i++) await server.create(`${imageServer.origin}/photo/${i}`, precisionOf(i));
    let next = 0;
    for (;;) {
      const report = await server.report();
      const done = (report.tasks.succeeded ?? 0) + (report.tasks.failed ?? 0);
      if (done >= next || done >= total) {
        samples.push({ done, seconds: (Date.now() - started) / 1000, report });
        console.log(`${done} tasks, RSS ${fixed(report.rssMb)} MB, peak ${fixed(report.peakRssMb)} MB`);
        next = done + Math.max(1, Math.floor(total / 20));
      }
      if (done >= total) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await server.stop();
    await imageServer.close();
  }
  console.log();
  // Page faults per task since the sample before: a task whose large buffers get fresh pages instead
  // of reusing freed ones faults in thousands, each charged by the host.
  printTable(
    ['tasks done', 'seconds', 'RSS MB', 'peak RSS MB', 'page faults per task'],
    samples.map((s, i) => [String(s.done), fixed(s.seconds), fixed(s.report.rssMb), fixed(s.report.peakRssMb), i === 0 ? '–' : fixed(faultsPerTask(samples[i - 1]!, s))]),
  );
  const last = samples.at(-1)!;
  const warm = samples.find((s) => s.done >= total * 0.1) ?? samples[0]!;
  const afterWarmUp = samples.filter((s) => s.done >= warm.done).map((s) => s.report.rssMb);
  console.log(`failed tasks: ${last.report.tasks.failed ?? 0}`);
  console.log(`peak RSS ${fixed(last.report.peakRssMb)} MB; RSS after warm-up (${warm.done} tasks) ${fixed(Math.min(...afterWarmUp))}–${fixed(Math.max(...afterWarmUp))} MB, ` +
    `end minus warm-up ${fixed(last.report.rssMb - warm.report.rssMb)} MB; ${fixed((last.done / last.seconds) * 60, 1)} tasks per minute; ` +
    `${fixed(faultsPerTask(warm, last))} page faults per task after warm-up`);
}

type Sampled = { done: number; report: Report };
const faultsPerTask = (from: Sampled, to: Sampled): number => (to.report.minorPageFaults - from.report.minorPageFaults) / Math.max(1, to.done - from.done);

await main();
