// How this CPU multiplies int8. onnxruntime's x86 kernels multiply u8 activations by s8 weights
// with VNNI where the CPU has it, exactly; without it (AVX2, AVX-512 without VNNI) they use
// VPMADDUBSW, which adds two u8×s8 products into a saturating 16-bit integer: 2 × 255 × 127 can
// overflow it, 2 × 255 × 63 cannot (onnxruntime's own quantiser calls 7-bit weights
// `reduce_range`). Other architectures' integer kernels (Arm's dot products) do not saturate.
// On a Zen 3 machine without VNNI the quantiser's accuracy test on a small random graph failed
// with ±127 weights, while ISNet on the fixtures lost quality to 7-bit weights: the product keeps
// ±127 everywhere (model-session.ts); this CPU's limit is for the benches and tests (bench/int8-variants.ts).
import { cpuFlags, cpuinfoText } from './cpu-features.ts';

/** The weight range a CPU multiplies exactly: ±127 where its multiply is exact, ±63 where it saturates. */
export type WeightLimit = 127 | 63;

/**
 * The weight limit for the CPU whose `/proc/cpuinfo` text this is: ±127 with VNNI and off x86, where
 * the multiply is exact; ±63 on any other x86 CPU, one whose features cannot be read included.
 */
export function weightLimitFor(cpuinfo: string, arch: string = process.arch): WeightLimit {
  if (arch !== 'x64' && arch !== 'ia32') return 127;
  const flags = cpuFlags(cpuinfo);
  return flags.includes('avx512_vnni') || flags.includes('avx_vnni') ? 127 : 63;
}

/** The limit for this machine's CPU. */
export function int8WeightLimit(): WeightLimit {
  return weightLimitFor(cpuinfoText());
}
