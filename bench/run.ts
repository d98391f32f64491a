// `npm run bench`: our pipeline and the peer's removeBackground() side by side, each side in its own
// child process, on the shared fixtures plus upscaled 2 MP and 12 MP photos. Prints tables; asserts nothing.
// `--quick` takes fewer runs (the whole bench then stays within a few minutes on 2 cores).
import { fork } from 'node:child_process';
import os from 'node:os';
import { allocatorEnv, withAllocatorEnv } from '../src/allocator-env.ts';
import { describeHost, measureHost } from './host.ts';
import { benchImages, type BenchImage } from './images.ts';
import type { Job, JobResult, PngSample, Sample, Side } from './side.ts';
import { fixed, median, p95, printTable } from './stats.ts';
import { steppedRuns } from './stepped.ts';

const quick = process.argv.includes('--quick');
const fixturePasses = quick ? 1 : 5;
const bigRuns = quick ? 3 : 5;
/** The PNG encoders' comparison is quick per run and noisy on a shared host: more runs. */
const pngRuns = quick ? 9 : 15;
const throughputImages = quick ? 6 : 14;

/** This environment without the allocator variables: glibc's defaults. */
function glibcDefaults(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(allocatorEnv)) delete env[name];
  return env;
}

// Both sides run with the allocator settings `npm start` uses (src/allocator-env.ts).
function runChild(job: Job): Promise<JobResult> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('./side.ts', import.meta.url), [JSON.stringify(job)], { execArgv: ['--import', 'tsx'], stdio: 'inherit', env: withAllocatorEnv(process.env) });
    let result: JobResult | undefined;
    child.on('message', (message) => (result = message as JobResult));
    child.on('error', reject);
    child.on('exit', (code) => (result ? resolve(result) : reject(new Error(`${job.side} ${job.kind} child exited with ${code}`))));
  });
}

/** Fixture passes and big-photo runs are separate jobs' worth of images in one child: cold once. */
function latencyImages(images: BenchImage[]): BenchImage[] {
  const fixtures = images.filter((i) => i.group === 'fixtures');
  const big = images.filter((i) => i.group !== 'fixtures');
  return [...Array.from({ length: fixturePasses }, () => fixtures).flat(), ...big.flatMap((i) => Array.from({ length: bigRuns }, () => i))];
}

async function main(): Promise<void> {
  const images = await benchImages();
  const groups = [...new Set(images.map((i) => i.group))];
  const sides: Side[] = ['ours-standard', 'ours-high', 'peer'];
  console.log(`cutout bench${quick ? ' --quick' : ''}: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}; ` +
    `${images.filter((i) => i.group === 'fixtures').length} fixtures × ${fixturePasses} + ${bigRuns} runs of each upscaled photo per side`);
  console.log(`${describeHost(await measureHost())}\n`);

  // The first start on a data folder saves the optimised graph; cold start is measured on later ones.
  await runChild({ kind: 'latency', side: 'ours-standard', images: images.slice(0, 1), runs: 0 });
  const latency = new Map<Side, JobResult>();
  for (const side of sides) {
    process.stdout.write(`latency: ${side}… `);
    latency.set(side, await runChild({ kind: 'latency', side, images: latencyImages(images), runs: 1 }));
    console.log('done');
  }
  console.log();

  const ms = (side: Side, group: string): number[] => latency.get(side)!.samples.filter((s) => s.group === group).map((s) => s.ms);
  const ratio = (ours: number, peer: number): string => `${fixed(ours / peer, 2)} (${fixed(peer / ours, 1)}× faster)`;
  console.log('Warm end-to-end latency, ms (encoded bytes in memory → encoded PNG cutout; each image run once unmeasured first), median / p95; ratio ours/peer of medians');
  printTable(
    ['images', 'n', 'ours standard', 'ours high', 'peer (medium)', 'standard/peer', 'high/peer'],
    groups.map((g) => [
      g,
      String(ms('peer', g).length),
      ...sides.map((s) => `${fixed(median(ms(s, g)))} / ${fixed(p95(ms(s, g)))}`),
      ratio(median(ms('ours-standard', g)), median(ms('peer', g))),
      ratio(median(ms('ours-high', g)), median(ms('peer', g))),
    ]),
  );

  const peer = latency.get('peer')!;
  console.log('Cold start (process start → first cutout, first fixture) and peak RSS of each side in its own process');
  printTable(
    ['side', 'cold start ms', 'peak RSS MB', 'cold ours/peer', 'RSS ours/peer'],
    sides.map((s) => {
      const r = latency.get(s)!;
      return [s, fixed(r.coldMs), fixed(r.peakRssMb), fixed(r.coldMs / peer.coldMs, 2), fixed(r.peakRssMb / peer.peakRssMb, 2)];
    }),
  );

  for (const side of ['ours-standard', 'ours-high'] as const) {
    const samples = latency.get(side)!.samples;
    const stages = [...new Set(samples.flatMap((s) => Object.keys(s.timings)))];
    console.log(`Our stages (${side}), median ms; share = everything but inference / end to end; PNG is compressed in compose's band threads, encode puts the file together`);
    printTable(
      ['images', ...stages, 'end to end', 'non-inference share'],
      groups.map((g) => {
        const inGroup = samples.filter((s) => s.group === g);
        const total = median(inGroup.map((s) => s.ms));
        const other = median(inGroup.map((s: Sample) => s.ms - (s.timings.inference ?? 0)));
        return [g, ...stages.map((st) => fixed(median(inGroup.map((s) => s.timings[st] ?? 0)), 1)), fixed(total), `${fixed((other / total) * 100, 1)} %`];
      }),
    );
  }

  // The allocator's and the collector's settings against V8's and glibc's defaults, in processes
  // taking turns image by image: each setting's difference is a few percent, less than a shared host's
  // load moves from one minute to the next.
  process.stdout.write("latency: ours-standard as shipped, with glibc's allocator defaults and with incremental marking, in turn… ");
  const stepped = await steppedRuns(
    [
      { name: 'shipped', env: withAllocatorEnv(process.env) },
      { name: 'glibc', env: glibcDefaults() },
      { name: 'incremental', env: withAllocatorEnv(process.env), nodeFlags: ['--incremental-marking'] },
    ],
    latencyImages(images),
  );
  console.log('done');
  const perImage = (samples: Sample[], g: string, value: (s: Sample) => number) => median(samples.filter((s) => s.group === g).map(value));
  const shipped = stepped.get('shipped')!;
  console.log("Allocator settings (ours-standard, the processes taking turns image by image), medians per image: end to end ms, the process's minor page faults and system CPU ms");
  const row = (samples: Sample[], g: string) => [fixed(perImage(samples, g, (s) => s.ms)), fixed(perImage(samples, g, (s) => s.pageFaults)), fixed(perImage(samples, g, (s) => s.systemMs), 1)];
  printTable(
    ['images', 'settings: ms', 'page faults', 'system ms', "glibc's defaults: ms", 'page faults', 'system ms'],
    groups.map((g) => [g, ...row(shipped, g), ...row(stepped.get('glibc')!, g)]),
  );
  console.log();

  console.log("Garbage collection (ours-standard, the same turns), medians per image: end to end ms, everything but inference ms, the main thread's collections and their pauses in ms");
  const collecting = (samples: Sample[], g: string) => [
    fixed(perImage(samples, g, (s) => s.ms)),
    fixed(perImage(samples, g, (s) => s.ms - (s.timings.inference ?? 0))),
    fixed(perImage(samples, g, (s) => s.collections)),
    fixed(perImage(samples, g, (s) => s.collectingMs), 1),
  ];
  printTable(
    ['images', 'marked at once: ms', 'non-inference ms', 'collections', 'pauses ms', "incrementally (V8's default): ms", 'non-inference ms', 'collections', 'pauses ms'],
    groups.map((g) => [g, ...collecting(shipped, g), ...collecting(stepped.get('incremental')!, g)]),
  );
  console.log();

  process.stdout.write('PNG encoders: ours-standard… ');
  const bigOnes = images.filter((i) => i.group !== 'fixtures');
  const pngFixtures = images.filter((i) => i.group === 'fixtures').slice(0, 4);
  const png = (await runChild({ kind: 'png', side: 'ours-standard', images: [...pngFixtures, ...bigOnes], runs: pngRuns })).pngSamples ?? [];
  console.log('done');
  console.log(
    'PNG from the same matte, median ms and bytes, composed and compressed in the band threads: deflated as literals and runs (shipped, png-deflate.ts: a large block packed as it is scanned,',
    'with codes counted from stretches of it), the same with every block counted in full and then packed (before), and by zlib at level 1 (earlier); and the RGBA joined and encoded by sharp',
    '(libpng, zlib level 1, earliest)',
  );
  const pngMedian = (g: string, value: (s: PngSample) => number) => median(png.filter((s) => s.group === g).map(value));
  printTable(
    ['images', 'n', 'bands ms', 'bands bytes', 'counted ms', 'counted bytes', 'bands+zlib ms', 'bands+zlib bytes', 'sharp ms', 'sharp bytes', 'time bands / counted / zlib / sharp', 'size bands / counted / zlib / sharp'],
    groups.map((g) => [
      g,
      String(png.filter((s) => s.group === g).length),
      fixed(pngMedian(g, (s) => s.bandsMs), 1),
      fixed(pngMedian(g, (s) => s.bandsBytes)),
      fixed(pngMedian(g, (s) => s.countedMs), 1),
      fixed(pngMedian(g, (s) => s.countedBytes)),
      fixed(pngMedian(g, (s) => s.zlibMs), 1),
      fixed(pngMedian(g, (s) => s.zlibBytes)),
      fixed(pngMedian(g, (s) => s.sharpMs), 1),
      fixed(pngMedian(g, (s) => s.sharpBytes)),
      `1 / ${fixed(pngMedian(g, (s) => s.countedMs / s.bandsMs), 2)} / ${fixed(pngMedian(g, (s) => s.zlibMs / s.bandsMs), 2)} / ${fixed(pngMedian(g, (s) => s.sharpMs / s.bandsMs), 2)}`,
      `1 / ${fixed(pngMedian(g, (s) => s.countedBytes / s.bandsBytes), 3)} / ${fixed(pngMedian(g, (s) => s.zlibBytes / s.bandsBytes), 2)} / ${fixed(pngMedian(g, (s) => s.sharpBytes / s.bandsBytes), 2)}`,
    ]),
  );
  console.log();

  const throughput = new Map<string, JobResult>();
  const fixtures = images.filter((i) => i.group === 'fixtures');
  const batch = Array.from({ length: throughputImages }, (_, i) => fixtures[i % fixtures.length]!);
  for (const side of ['ours-standard', 'peer'] as const) {
    for (const concurrency of [1, 2]) {
      process.stdout.write(`throughput: ${side} × ${concurrency}… `);
      throughput.set(`${side}/${concurrency}`, await runChild({ kind: 'throughput', side, images: batch, concurrency }));
      console.log('done');
    }
  }
  console.log(`Throughput on ${throughputImages} fixtures, images per minute (worker slots = concurrency; our one session keeps every core)`);
  const best = (side: string) => Math.max(...[1, 2].map((c) => throughput.get(`${side}/${c}`)!.imagesPerMinute));
  printTable(
    ['side', 'concurrency 1', 'concurrency 2', 'peak RSS MB (1 / 2)', 'best'],
    (['ours-standard', 'peer'] as const).map((s) => [
      s,
      fixed(throughput.get(`${s}/1`)!.imagesPerMinute, 1),
      fixed(throughput.get(`${s}/2`)!.imagesPerMinute, 1),
      `${fixed(throughput.get(`${s}/1`)!.peakRssMb)} / ${fixed(throughput.get(`${s}/2`)!.peakRssMb)}`,
      fixed(best(s), 1),
    ]),
  );
  console.log(`best throughput ours/peer: ${fixed(best('ours-standard') / best('peer'), 2)}`);
  console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (other processes compete for the CPU when this is above ~0)`);
}

await main();
