// This checkout's pipeline against another checkout's (an earlier commit, say), side by side: the
// two run as processes taking turns image by image (stepped.ts), so that a shared host's changing
// load slows both alike, and the table gives each one's stage medians, its main thread's garbage
// collections, and the ratios. `--against` names the other checkout, with its `npm ci` done and its
// kernels built; `--runs` how many times each photo runs (12 by default); `--fixtures` adds the
// fixtures to the 2 MP and 12 MP photos; `--batch N` has each side run N photos in a row, as a busy
// worker does, before the other runs the same N (1 by default: the two alternate photo by photo).
// Each side's process starts with its own checkout's allocator settings (src/allocator-env.ts),
// which are part of what is compared.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { withCheckoutAllocatorEnv } from './checkout-env.ts';
import { benchImages } from './images.ts';
import type { Sample } from './side.ts';
import { fixed, mean, median, printTable, quantile } from './stats.ts';
import { steppedRuns } from './stepped.ts';

const { values } = parseArgs({ options: { against: { type: 'string' }, runs: { type: 'string', default: '12' }, fixtures: { type: 'boolean', default: false }, batch: { type: 'string', default: '1' } } });
const against = z
  .string({ error: '--against <checkout> is required' })
  .refine((dir) => fs.existsSync(path.join(dir, 'bench/side.ts')), 'no bench/side.ts in the checkout --against names')
  .parse(values.against);
const runs = z.coerce.number().int().min(1).max(200).parse(values.runs);
const batch = z.coerce.number().int().min(1).max(1000).parse(values.batch);

/** Everything but inference: the work the share counts. */
const nonInferenceMs = (s: Sample): number => s.ms - (s.timings.inference ?? 0);

async function main(): Promise<void> {
  const images = (await benchImages()).filter((i) => values.fixtures || i.group !== 'fixtures');
  const steps = Array.from({ length: runs }, () => images).flat();
  const names = ['this checkout', path.basename(path.resolve(against))] as const;
  process.stdout.write(`turns: ${names[0]} and ${against}, ${steps.length} images each, ${batch} in a row… `);
  const samples = await steppedRuns(
    [
      { name: names[0], env: await withCheckoutAllocatorEnv(process.env) },
      { name: names[1], env: await withCheckoutAllocatorEnv(process.env, against), checkout: against },
    ],
    steps,
    batch,
  );
  console.log('done');
  // The stages either side timed, as `npm run bench` lists them.
  const stages = [...new Set(names.flatMap((name) => samples.get(name)!.flatMap((s) => Object.keys(s.timings))))];
  console.log("Medians per image, ms, of the two taking turns; collections and pauses: the main thread's; share: everything but inference / end to end");
  const groups = [...new Set(images.map((i) => i.group))];
  const rows: string[][] = [];
  for (const group of groups) {
    const [mine, theirs] = names.map((name) => {
      const list = samples.get(name)!.filter((s) => s.group === group);
      const at = (value: (s: Sample) => number) => median(list.map(value));
      return { name, list, at, total: at((s) => s.ms), other: at(nonInferenceMs) };
    }) as [Side, Side];
    for (const { name, list, at, total, other } of [mine, theirs]) {
      rows.push([
        group, name, String(list.length), fixed(total, 1), fixed(other, 1),
        ...stages.map((stage) => fixed(at((s) => s.timings[stage] ?? 0), 1)),
        fixed(at((s) => s.collections)), fixed(at((s) => s.collectingMs), 1), `${fixed((other / total) * 100, 1)} %`,
      ]);
    }
    rows.push([group, 'ratio', '', fixed(mine.total / theirs.total, 3), fixed(mine.other / theirs.other, 3), ...stages.map(() => ''), '', '', '']);
  }
  printTable(['images', 'checkout', 'n', 'end to end', 'non-inference', ...stages, 'collections', 'pauses ms', 'share'], rows);
  printTails(groups, names.map((name) => [name, samples.get(name)!] as const));
}

/**
 * What the medians hide: a task that faults in thousands of fresh pages takes far longer around
 * inference on a host that charges microseconds a page, and such tasks lengthen the mean (the
 * throughput) and the slow tail without moving the median.
 */
function printTails(groups: string[], sides: (readonly [string, Sample[]])[]): void {
  console.log("Tails per image of the same turns: everything but inference, ms (mean, 90th percentile, slowest); the process's minor page faults (median, mean, most) and system CPU ms (mean)");
  const rows = groups.flatMap((group) =>
    sides.map(([name, all]) => {
      const list = all.filter((s) => s.group === group);
      const other = list.map(nonInferenceMs);
      const faults = list.map((s) => s.pageFaults);
      return [
        group, name,
        fixed(mean(other), 1), fixed(quantile(other, 0.9), 1), fixed(Math.max(...other), 1),
        fixed(median(faults)), fixed(mean(faults)), fixed(Math.max(...faults)),
        fixed(mean(list.map((s) => s.systemMs)), 1),
      ];
    }),
  );
  printTable(['images', 'checkout', 'non-inference mean', 'p90', 'slowest', 'page faults median', 'mean', 'most', 'system ms mean'], rows);
}

interface Side {
  name: string;
  list: Sample[];
  at: (value: (s: Sample) => number) => number;
  total: number;
  other: number;
}

await main();
