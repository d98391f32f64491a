// `cutout remove`: the service's pipeline on local files, without a server or a database.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { TaskError } from '../domain/errors.ts';
import { outputFormats, precisions, subjects } from '../domain/removal-request.ts';
import { segmenterOptions } from '../worker/start-worker.ts';
import { loadSegmenter, removeBackground } from '../vision/remove-background.ts';
import { parseFlags } from './args.ts';
import { CliError } from './output.ts';

export async function removeCommand(config: Config, argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(
    argv,
    { 'out-dir': { type: 'string' }, subject: { type: 'string' }, precision: { type: 'string' }, format: { type: 'string' } },
    z.object({
      'out-dir': z.string().min(1),
      subject: z.enum(subjects).default('auto'),
      precision: z
        .enum(['standard', 'high', 'hd'])
        .default('standard')
        .transform((p) => (p === 'hd' ? 'high' : p) as (typeof precisions)[number]),
      format: z.enum(outputFormats).default('png'),
    }),
    Number.POSITIVE_INFINITY,
  );
  if (positionals.length === 0) throw new CliError('usage: cutout remove FILE... --out-dir DIR [--subject S] [--precision P] [--format png|webp]', 2);
  const outDir = path.resolve(values['out-dir']);
  const targets = positionals.map((file) => path.join(outDir, `${path.parse(file).name}.${values.format}`));
  refuseSharedTargets(positionals, targets);
  refuseOverwrittenInputs(positionals, targets);
  await fsp.mkdir(outDir, { recursive: true });
  const segmenter = await loadSegmenter(segmenterOptions(config));
  let failures = 0;
  for (const [index, file] of positionals.entries()) {
    const started = Date.now();
    const prefix = `[${index + 1}/${positionals.length}] ${file}`;
    try {
      const input = await fsp.readFile(file);
      const cutout = await removeBackground(segmenter, input, { subject: values.subject, precision: values.precision, format: values.format, maxPixels: config.maxPixels });
      const target = targets[index]!;
      await fsp.writeFile(target, cutout.data);
      process.stderr.write(`${prefix} → ${target} ${cutout.width}×${cutout.height} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    } catch (err) {
      failures += 1;
      const reason = err instanceof TaskError ? `${err.code}: ${err.message}` : (err as Error).message;
      process.stderr.write(`${prefix} failed: ${reason}\n`);
    }
  }
  if (failures > 0) throw new CliError(`${failures} of ${positionals.length} files failed`);
}

/**
 * Two inputs with one base name (photo.jpg and photo.png, or a/x.png and b/x.png) would write one
 * cutout over the other: refused before any work. Compared without case, since on a case-insensitive
 * file system (macOS, Windows) Photo.png and photo.png are one file.
 */
function refuseSharedTargets(files: string[], targets: string[]): void {
  const byTarget = new Map<string, { target: string; inputs: Set<string> }>();
  for (const [index, target] of targets.entries()) {
    const entry = byTarget.get(target.toLowerCase()) ?? { target, inputs: new Set<string>() };
    entry.inputs.add(path.resolve(files[index]!));
    byTarget.set(target.toLowerCase(), entry);
  }
  const clashes = [...byTarget.values()].filter(({ inputs }) => inputs.size > 1);
  if (clashes.length === 0) return;
  const lines = clashes.map(({ target, inputs }) => `  ${[...inputs].join(' and ')} would each be written to ${target}`);
  throw new CliError(`cutout remove: these files share a name, so one cutout would overwrite another:\n${lines.join('\n')}\nRun them in separate calls with different --out-dir folders.`, 2);
}

/**
 * A cutout written over its own input (its own folder as --out-dir, in its own format: photo.png →
 * ./photo.png) would replace the photo, read just before, so the command would succeed and the
 * original be gone: refused before any work. Compared without case, as above, and as files: a
 * folder reached through a symbolic link (an --out-dir linked to the photos' folder) or a hard link
 * names the same file by another path.
 */
function refuseOverwrittenInputs(files: string[], targets: string[]): void {
  // Another input cannot be the target: it would share the target's name, and so be refused above.
  const overwritten = [...new Set(files.map((file) => path.resolve(file)).filter((file, index) => sameFile(file, targets[index]!)))];
  if (overwritten.length === 0) return;
  const lines = overwritten.map((file) => `  ${file} would be written over by its own cutout`);
  throw new CliError(`cutout remove: these files would be replaced by the cutouts:\n${lines.join('\n')}\nChoose another --out-dir.`, 2);
}

function sameFile(input: string, target: string): boolean {
  if (input.toLowerCase() === target.toLowerCase()) return true;
  // A target not there yet, or an input that cannot be read (reported as that file's failure), is no clash.
  try {
    const [a, b] = [fs.statSync(input), fs.statSync(target)];
    return a.dev === b.dev && a.ino === b.ino;
  } catch {
    return false;
  }
}
