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

const stages = ['decode', 'preprocess', 'inference', 'refine', 'foreground', 'compose', 'encode'] as const;

async function main(): Promise<void> {
  const images = (await benchImages()).filter((i) => values.fixtures || i.group !== 'fixtures');
  const steps = Array.from({ length: runs }, () => images).flat();
  const names = ['this checkout', path.basename(path.resolve(against))];
  process.stdout.write(`turns: ${names[0]} and ${against}, ${steps.length} images each… `);
  const samples = await steppedRuns(
    [
      { name: names[0]!, env: withAllocatorEnv(process.env) },
      { name: names[1]!, env: withAllocatorEnv(process.env), checkout: against },
    ],
    steps,
  );
  console.log('done');
  console.log("Medians per image, ms, of the two taking turns; collections and pauses: the main thread's; share: everything but inference / end to end");
  const rows: string[][] = [];
  for (const group of [...new Set(images.map((i) => i.group))]) {
    const of = (name: string) => samples.get(name)!.filter((s) => s.group === group);
    const at = (list: Sample[], value: (s: Sample) => number) => median(list.map(value));
    const row = (name: string): string[] => {
      const list = of(name);
      const total = at(list, (s) => s.ms);
      const other = at(list, (s) => s.ms - (s.timings.inference ?? 0));
      return [
        group, name, String(list.length), fixed(total, 1), fixed(other, 1),
        ...stages.map((stage) => fixed(at(list, (s) => s.timings[stage] ?? 0), 1)),
        fixed(at(list, (s) => s.collections)), fixed(at(list, (s) => s.collectingMs), 1), `${fixed((other / total) * 100, 1)} %`,
      ];
    };
    const [mine, theirs] = [row(names[0]!), row(names[1]!)];
    rows.push(mine, theirs, [group, 'ratio', '', fixed(Number(mine[3]) / Number(theirs[3]), 3), fixed(Number(mine[4]) / Number(theirs[4]), 3), ...stages.map(() => ''), '', '', '']);
  }
  printTable(['images', 'checkout', 'n', 'end to end', 'non-inference', ...stages, 'collections', 'pauses ms', 'share'], rows);
}

await main();
