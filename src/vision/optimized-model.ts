// Keeps the graph that onnxruntime optimised for this machine, so that later starts skip the
// optimisation: measured, a session from the saved graph is ready in ~0.5 s instead of 2.7–5.8 s.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { cpuFlags, cpuinfoText } from './cpu-features.ts';

export interface ModelSource {
  /** Changes whenever the graph `build` returns would change. */
  identity: string;
  /** The graph to optimise, read only when no saved one fits. */
  build(): Promise<Uint8Array>;
}

/** The CPU an optimised graph was saved for: its name, and its feature flags (vector widths, VNNI). */
export interface CpuIdentity {
  model: string;
  flags: string[];
}

function thisCpu(): CpuIdentity {
  return { model: os.cpus()[0]?.model ?? '', flags: cpuFlags(cpuinfoText()) };
}

/**
 * The saved graph holds layout transforms for this CPU's vector width (onnxruntime warns that it
 * is hardware specific), so it is named for the runtime version, the CPU, the optimisation level
 * and the model. The CPU by its flags as well as its name: a guest may name Zen 3, 4 and 5 all
 * "AMD EPYC", and a data folder moved to another machine (a volume attached elsewhere) must not
 * load a graph laid out for AVX-512 on a CPU with AVX2 only.
 */
export function optimizedModelFileName(identity: string, options: ort.InferenceSession.SessionOptions, cpu: CpuIdentity = thisCpu()): string {
  const key = createHash('sha256')
    .update(JSON.stringify({ identity, ort: ort.env.versions.node, arch: os.arch(), cpu: cpu.model, flags: cpu.flags, level: options.graphOptimizationLevel }))
    .digest('hex')
    .slice(0, 16);
  return `isnet-optimized-${key}.onnx`;
}

/**
 * A session for `source`, optimised once and then read back from `cacheDir`. A saved graph that
 * cannot be loaded (truncated, written by something else) is rebuilt.
 */
export async function loadOptimizedModel(cacheDir: string, options: ort.InferenceSession.SessionOptions, source: ModelSource): Promise<ort.InferenceSession> {
  const file = path.join(cacheDir, optimizedModelFileName(source.identity, options));
  if (fs.existsSync(file)) {
    try {
      return await ort.InferenceSession.create(file, { ...options, graphOptimizationLevel: 'disabled' });
    } catch {
      fs.rmSync(file, { force: true });
    }
  }
  fs.mkdirSync(cacheDir, { recursive: true });
  // Written under a temporary name and renamed, so another process never reads half a file.
  const partial = `${file}.${process.pid}.partial`;
  try {
    const session = await ort.InferenceSession.create(await source.build(), { ...options, optimizedModelFilePath: partial, logSeverityLevel: 3 });
    fs.renameSync(partial, file);
    return session;
  } finally {
    fs.rmSync(partial, { force: true });
  }
}
