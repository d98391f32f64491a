// `npm run bench:inference -- --int8 --profile`: where a pass of each INT8 graph spends its time, by
// operator, from onnxruntime's own profiler (enableProfiling), the graphs' passes alternating on
// the same inputs. Sums of kernel times, not wall time: they show which operators an edit of the
// graph changes, and the interleaved table of the same run shows what that does to a pass.
import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { Variant } from './model-variants.ts';
import { fixed, printTable } from './stats.ts';

interface ProfileEvent {
  cat: string;
  name: string;
  dur: number;
  args?: { op_name?: string };
}

/** Milliseconds per pass by operator type, from a profile file of `passes` runs. */
function perOperator(file: string, passes: number): Map<string, number> {
  const events = JSON.parse(fs.readFileSync(file, 'utf8')) as ProfileEvent[];
  const totals = new Map<string, number>();
  for (const e of events) {
    const op = e.args?.op_name;
    if (e.cat === 'Node' && e.name.endsWith('_kernel_time') && op) totals.set(op, (totals.get(op) ?? 0) + e.dur / 1000 / passes);
  }
  return totals;
}

/** Prints, for each variant, the operators' milliseconds per pass and share of the kernels' time, largest first. */
export async function printOperatorProfile(variants: Variant[], inputs: Float32Array[], rounds: number, options: ort.InferenceSession.SessionOptions, scratch: string): Promise<void> {
  const sessions: ort.InferenceSession[] = [];
  for (const [i, variant] of variants.entries()) {
    const profileFilePrefix = path.join(scratch, `profile-${i}`);
    sessions.push(await ort.InferenceSession.create((await variant.model()) as Uint8Array, { ...options, ...variant.options, enableProfiling: true, profileFilePrefix }));
  }
  for (let round = 0; round < rounds; round++) {
    for (const input of inputs) {
      for (const [i, session] of sessions.entries()) {
        const side = variants[i]!.side;
        await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', input, [1, 3, side, side]) }, ['output']);
      }
    }
  }
  const profiles = sessions.map((session, i) => {
    session.endProfiling();
    const file = fs.readdirSync(scratch).find((f) => f.startsWith(`profile-${i}`) && f.endsWith('.json'));
    if (!file) throw new Error(`onnxruntime wrote no profile for ${variants[i]!.name}`);
    return perOperator(path.join(scratch, file), rounds * inputs.length);
  });
  for (const session of sessions) await session.release();
  const totals = profiles.map((p) => [...p.values()].reduce((a, b) => a + b, 0));
  const ops = [...new Set(profiles.flatMap((p) => [...p.keys()]))].sort((a, b) => (profiles[0]!.get(b) ?? 0) - (profiles[0]!.get(a) ?? 0));
  console.log(`Operator profile (onnxruntime's kernel times, ms per pass and share), ${rounds * inputs.length} alternating passes each: ${variants.map((v) => v.name).join(' / ')}`);
  printTable(
    ['operator', ...variants.flatMap((_, i) => [`#${i + 1} ms`, `#${i + 1} share`])],
    [...ops, 'all kernels'].map((op) => [
      op,
      ...profiles.flatMap((p, i) => {
        const ms = op === 'all kernels' ? totals[i]! : (p.get(op) ?? 0);
        return [fixed(ms, 1), `${fixed((100 * ms) / totals[i]!, 1)} %`];
      }),
    ]),
  );
}
