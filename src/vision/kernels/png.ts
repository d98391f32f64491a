// AssemblyScript (see planes.ts): the cutout's RGBA rows as PNG scanlines and the zlib checksum over
// them, for the band threads that compress their own rows (../png-scanlines.ts). Of PNG's filters,
// Up (each byte minus the one above it) gave zlib at level 1 the smallest output in the least time
// on a 12 MP cutout, in a comparison outside the benches (None, Sub, Up, Average, Paeth): the clear
// background and smooth regions become runs of zeros. `npm run bench` compares the result with
// sharp's PNG (libpng, zlib level 1, no filter).

/**
 * Writes `rows` scanlines from the rows at `pixels` (`rowBytes` apart) to `out`, each one filter-type
 * byte then `rowBytes` bytes: Up (2) against the row before, the first row against `previous`, or
 * None (0) when `previous` is 0 (a band's first row: the row above belongs to another thread).
 */
export function filterUp(pixels: usize, rows: i32, rowBytes: i32, previous: usize, out: usize): void {
  const n = <usize>rowBytes;
  const vectorEnd = n & ~15;
  for (let y = 0; y < rows; y++) {
    const row = pixels + <usize>y * n;
    const above = y > 0 ? row - n : previous;
    const line = out + <usize>y * (n + 1);
    if (above == 0) {
      store<u8>(line, 0);
      memory.copy(line + 1, row, n);
      continue;
    }
    store<u8>(line, 2);
    for (let i: usize = 0; i < vectorEnd; i += 16) {
      v128.store(line + 1 + i, i8x16.sub(v128.load(row + i), v128.load(above + i)));
    }
    for (let i = vectorEnd; i < n; i++) store<u8>(line + 1 + i, load<u8>(row + i) - load<u8>(above + i));
  }
}

const modulus: u64 = 65521;
/** Sixteen-byte blocks summed between reductions: the lanes stay far below 2³² (see adler32). */
const blocksPerRun: usize = 256;

/**
 * zlib's Adler-32 of `length` bytes at `data`, continuing from `adler` (1 for none yet). Over a
 * block of 16 bytes b₀…b₁₅ the sums step as s1 += Σbᵢ and s2 += 16·s1 + Σ(16 − i)·bᵢ, so the lanes
 * carry the byte sums, the running sums before each block and the weighted sums, reduced once a run.
 */
export function adler32(data: usize, length: usize, adler: u32): u32 {
  let s1: u64 = <u64>(adler & 0xffff), s2: u64 = <u64>(adler >>> 16);
  const weightsLow = i16x8(16, 15, 14, 13, 12, 11, 10, 9);
  const weightsHigh = i16x8(8, 7, 6, 5, 4, 3, 2, 1);
  let at = data;
  const end = data + length;
  while (end - at >= 16) {
    const blocks = min((end - at) >> 4, blocksPerRun);
    let sums = i32x4.splat(0), before = i32x4.splat(0), weighted = i32x4.splat(0);
    for (let b: usize = 0; b < blocks; b++) {
      const bytes = v128.load(at + (b << 4));
      before = i32x4.add(before, sums);
      sums = i32x4.add(sums, i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(bytes)));
      weighted = i32x4.add(weighted, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(bytes), weightsLow));
      weighted = i32x4.add(weighted, i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(bytes), weightsHigh));
    }
    const sum = <u64>laneSum(sums);
    s2 = (s2 + (<u64>blocks << 4) * s1 + (<u64>laneSum(before) << 4) + <u64>laneSum(weighted)) % modulus;
    s1 = (s1 + sum) % modulus;
    at += blocks << 4;
  }
  for (; at < end; at++) {
    s1 += <u64>load<u8>(at);
    s2 += s1;
  }
  return <u32>((s2 % modulus) << 16) | <u32>(s1 % modulus);
}

function laneSum(v: v128): u32 {
  return i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) + i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3);
}
