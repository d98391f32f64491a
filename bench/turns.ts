// This checkout's pipeline against another checkout's (an earlier commit, say), side by side: the
// two run as processes taking turns image by image (stepped.ts), so that a shared host's changing
// load slows both alike, and the table gives each one's stage medians, its main thread's garbage
// collections, and the ratios. `--against` names the other checkout, with its `npm ci` done and its
// kernels built; `--runs` how many times each photo runs (12 by default); `--fixtures` adds the
// fixtures to the 2 MP and 12 MP photos.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { withAllocatorEnv } from '../src/allocator-env.ts';
import { benchImages } from './images.ts';
import type { Sample } from './side.ts';
import { fixed, median, printTable } from './stats.ts';
import { steppedRuns } from './stepped.ts';

const { values } = parseArgs({ options: { against: { type: 'string' }, runs: { type: 'string', default: '12' }, fixtures: { type: 'boolean', default: false } } });
const against = z
  .string({ error: '--against <checkout> is required' })
  .refine((dir) => fs.existsSync(path.join(dir, 'bench/side.ts')), 'no bench/side.ts in the checkout --against names')
  .parse(values.against);
const runs = z.coerce.number().int().min(1).max(200).parse(values.runs);

async function main(): Promise<void> {
  const images = (await benchImages()).filter((i) => values.fixtures || i.group !== 'fixtures');
  const steps = Array.from({ length: runs }, () => images).flat();
  const names = ['this checkout', path.basename(path.resolve(against))] as const;
  process.stdout.write(`turns: ${names[0]} and ${against}, ${steps.length} images each… `);
  const samples = await steppedRuns(
    [
      { name: names[0], env: withAllocatorEnv(process.env) },
      { name: names[1], env: withAllocatorEnv(process.env), checkout: against },
    ],
    steps,
  );
  console.log('done');
  // The stages either side timed, as `npm run bench` lists them.
  const stages = [...new Set(names.flatMap((name) => samples.get(name)!.flatMap((s) => Object.keys(s.timings))))];
  console.log("Medians per image, ms, of the two taking turns; collections and pauses: the main thread's; share: everything but inference / end to end");
  const rows: string[][] = [];
  for (const group of [...new Set(images.map((i) => i.group))]) {
    const [mine, theirs] = names.map((name) => {
      const list = samples.get(name)!.filter((s) => s.group === group);
      const at = (value: (s: Sample) => number) => median(list.map(value));
      return { name, list, at, total: at((s) => s.ms), other: at((s) => s.ms - (s.timings.inference ?? 0)) };
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
}

interface Side {
  name: string;
  list: Sample[];
  at: (value: (s: Sample) => number) => number;
  total: number;
  other: number;
}

await main();
