// What this CPU reports of itself in /proc/cpuinfo, read once: its x86 feature flags decide how
// onnxruntime multiplies int8 (int8-cpu.ts) and which vector layouts an optimised graph was saved
// for (optimized-model.ts).
import fs from 'node:fs';

let cached: string | undefined;

/** The text of /proc/cpuinfo, or '' where there is none (not Linux). */
export function cpuinfoText(): string {
  if (cached === undefined) {
    try {
      cached = fs.readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      cached = '';
    }
  }
  return cached;
}

/** The first processor's feature flags in that text (x86's `flags` line; Arm's `Features`), sorted. */
export function cpuFlags(cpuinfo: string): string[] {
  const line = /^(?:flags|Features)\s*:(.*)$/m.exec(cpuinfo)?.[1]?.trim();
  return line ? line.split(/\s+/).sort() : [];
}
