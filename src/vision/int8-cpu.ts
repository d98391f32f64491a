// Which int8 weight range this CPU multiplies exactly. onnxruntime's x86 kernels multiply u8
// activations by s8 weights with VNNI where the CPU has it; without it (AVX2, AVX-512 without
// VNNI) they use VPMADDUBSW, which adds two u8×s8 products into a saturating 16-bit integer:
// 2 × 255 × 127 can overflow it, 2 × 255 × 63 cannot (onnxruntime's own quantiser calls 7-bit
// weights `reduce_range`). On a Zen 3 machine without VNNI the quantiser's accuracy test on a
// small random graph failed with ±127 weights, while ISNet on the fixtures lost nothing to the
// saturation and lost quality to 7-bit weights (model-session.ts): the product keeps ±127, and
// that test and a bench:inference row use this limit.
import fs from 'node:fs';

/** The weight range a CPU multiplies exactly: ±127 with VNNI, ±63 without (or when its features cannot be read). */
export type WeightLimit = 127 | 63;

/** The limit for the CPU whose `/proc/cpuinfo` text this is. */
export function weightLimitFor(cpuinfo: string): WeightLimit {
  const flags = /^flags\s*:(.*)$/m.exec(cpuinfo)?.[1]?.trim().split(/\s+/) ?? [];
  return flags.includes('avx512_vnni') || flags.includes('avx_vnni') ? 127 : 63;
}

let cached: WeightLimit | undefined;

/** The limit for this machine's CPU, read once. */
export function int8WeightLimit(): WeightLimit {
  if (cached === undefined) {
    let cpuinfo = '';
    try {
      cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      // Not Linux: the saturation-safe range.
    }
    cached = weightLimitFor(cpuinfo);
  }
  return cached;
}
