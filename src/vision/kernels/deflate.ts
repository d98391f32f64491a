// AssemblyScript (see planes.ts): the scan and the bit packing of a deflate block for PNG scanlines
// (../png-deflate.ts builds the Huffman codes and the block header): a small block scanned into
// tokens and counts, then packed; a large one counted in stretches (deflateSample) and then packed
// as it is scanned (deflate-fused.ts), with codes from those counts (png-deflate.ts,
// blockSampling). Filtered cutout rows are mostly runs of one byte (zeros: clear background,
// Up-filtered flat areas, the alpha of opaque pixels minus the row above), pixels that repeat the
// one before (smooth or enlarged photos), and photo residuals that repeat too little for LZ77 to
// pay. So the only matches sought are at distance 1 (runs) and 4 (the pixel before), and
// everything else is a literal; zlib at level 1 hashes and searches at every position for the few
// other matches it finds there.

/** Shorter repeats stay literals: a match of 3 costs about what three short literals do. */
export const minMatch: i32 = 4;
export const maxMatch: i32 = 258;
export const endOfBlock: u32 = 256;
const symbolCount: i32 = 286;
/** Literals are counted in this many tables (a power of two), added up at the end of the scan. */
const histogramCount: usize = 4;
const histogramBytes: i32 = symbolCount * 4;
/** Tokens above these are matches of (token − base) bytes at distance 1 and 4; below 256, literal bytes. */
const nearToken: i32 = 256;
const pixelToken: i32 = 1024;

/**
 * The tokens of `length` bytes at `data`, as u16 at `tokens`, and their literal/length symbols
 * counted into `counts` (histogramCount tables of 286 u32, zero on entry; the first holds the
 * totals on return). Where at least minMatch bytes repeat the pixel before (distance 4) or begin a
 * run of one value (that byte as a literal, then the rest at distance 1), the longer of the two is a
 * match; every other byte is a literal; nothing refers to bytes before `data`. The end of the block
 * is the last token. Returns the number of tokens.
 */
export function deflateScan(data: usize, length: i32, counts: usize, tokens: usize): i32 {
  const tokenCount = scanTokens(data, length, counts, tokens);
  addUpCounts(counts);
  return tokenCount;
}

/**
 * The symbols' counts of deflateScan's tokens in stretches of `bytes` bytes every `stride` bytes of
 * the `length` at `data` (each stretch scanned as a block of its own), into `counts` as for
 * deflateScan, with the end of the block counted once; `tokens` is scratch for a stretch's tokens.
 */
export function deflateSample(data: usize, length: i32, stride: i32, bytes: i32, counts: usize, tokens: usize): void {
  for (let from = 0; from < length; from += stride) scanTokens(data + <usize>from, min(bytes, length - from), counts, tokens);
  addUpCounts(counts);
  store<u32>(counts + (<usize>endOfBlock << 2), 1);
}

/** deflateScan's tokens and counts, the counts left in their histogramCount tables. */
function scanTokens(data: usize, length: i32, counts: usize, tokens: usize): i32 {
  const end = data + <usize>length;
  let at = data;
  let token = tokens;
  while (at < end) {
    // Up to 16 literals at once.
    if (end - at >= 33 && at - data >= 4) {
      const literals = literalsAhead(at);
      // All sixteen widened to tokens at once; those past the literals are overwritten next.
      const bytes = v128.load(at);
      v128.store(token, i16x8.extend_low_i8x16_u(bytes));
      v128.store(token, i16x8.extend_high_i8x16_u(bytes), 16);
      // Neighbouring literals go to different tables: a byte that recurs at every position (zeros
      // above all) then waits for the last increment of its counter only every fourth byte.
      for (let i: usize = 0; i < literals; i++) {
        const at4 = counts + ((i & (histogramCount - 1)) * <usize>histogramBytes) + (<usize>load<u8>(at + i) << 2);
        store<u32>(at4, load<u32>(at4) + 1);
      }
      at += literals;
      token += literals << 1;
      if (literals == 16) continue;
    }
    const run = repeats(at, at + 1, end) + 1;
    const pixelRun = at - data >= 4 ? repeats(at, at - 4, end) : 0;
    if (run < <usize>minMatch && pixelRun < <usize>minMatch) {
      count(counts, load<u8>(at));
      store<u16>(token, <u16>load<u8>(at));
      at++;
      token += 2;
      continue;
    }
    let rest: i32, base: i32;
    if (pixelRun >= run) {
      rest = <i32>pixelRun;
      base = pixelToken;
      at += pixelRun;
    } else {
      count(counts, load<u8>(at));
      store<u16>(token, <u16>load<u8>(at));
      token += 2;
      rest = <i32>run - 1;
      base = nearToken;
      at += run;
    }
    while (rest > 0) {
      const piece = nextPiece(rest);
      count(counts, lengthSymbol(piece) & 0x1ff);
      store<u16>(token, <u16>(base + piece));
      token += 2;
      rest -= piece;
    }
  }
  count(counts, endOfBlock);
  store<u16>(token, <u16>endOfBlock);
  return <i32>((token - tokens) >> 1) + 1;
}

/** The histogramCount tables of counts added up into the first. */
function addUpCounts(counts: usize): void {
  for (let t: usize = 1; t < histogramCount; t++) {
    for (let symbol: usize = 0; symbol < <usize>symbolCount; symbol++) {
      const total = counts + (symbol << 2);
      store<u32>(total, load<u32>(total) + load<u32>(total + t * <usize>histogramBytes));
    }
  }
}

/**
 * Of the 16 bytes from `at` (33 readable from there, 4 before), how many come before the first at
 * which a run or a repeat of the pixel before, of minMatch bytes, begins: from 32 + 16 comparisons.
 */
// @ts-ignore: decorator
@inline
function literalsAhead(at: usize): usize {
  const near = <u32>i8x16.bitmask(i8x16.eq(v128.load(at), v128.load(at + 1))) | (<u32>i8x16.bitmask(i8x16.eq(v128.load(at + 16), v128.load(at + 17))) << 16);
  const pixel = <u32>i8x16.bitmask(i8x16.eq(v128.load(at), v128.load(at - 4))) | (<u32>i8x16.bitmask(i8x16.eq(v128.load(at + 16), v128.load(at + 12))) << 16);
  return <usize>min(ctz(matchStarts<u32>(near, pixel)), 16);
}

/**
 * Bit i set where a match of minMatch begins at position i, from masks of positions whose byte equals
 * the next (`near`) and the one 4 before (`pixel`): three equal pairs make a run of 4, four equal
 * bytes a repeated pixel. Only the bits whose next three (four) bits are in the masks are sure.
 */
// @ts-ignore: decorator
@inline
export function matchStarts<T>(near: T, pixel: T): T {
  return (near & (near >> 1) & (near >> 2)) | (pixel & (pixel >> 1) & (pixel >> 2) & (pixel >> 3));
}

/** The next match's length for `rest` bytes to match: never leaves 1 or 2 behind a full-length match, which could not form a match of their own. */
// @ts-ignore: decorator
@inline
export function nextPiece(rest: i32): i32 {
  return rest > maxMatch && rest - maxMatch < 3 ? rest - 3 : min(rest, maxMatch);
}

/** How many bytes from `at` on (before `end`) equal those from `from` on (from < at, or at + 1), 16 compared at a time while they can be. */
export function repeats(at: usize, from: usize, end: usize): usize {
  let n: usize = 0;
  const last = max(at, from);
  while (end - (last + n) >= 16) {
    const equal = <u32>i8x16.bitmask(i8x16.eq(v128.load(at + n), v128.load(from + n)));
    if (equal != 0xffff) return n + <usize>ctz(~equal);
    n += 16;
  }
  while (last + n < end && load<u8>(at + n) == load<u8>(from + n)) n++;
  return n;
}

/**
 * Writes `tokenCount` tokens from `tokens` (deflateScan's, the end of block last) to the bit stream
 * whose state is at `state` (u32 output address, u32 bit count, u64 pending bits, LSB first; fewer
 * than 8 pending before and after). It may store up to 8 bytes past the last whole byte written.
 * `table` holds a code for each of the 286 literal/length symbols, `near` and `pixel` those of the
 * distance 1 and 4, each packed as the bits (reversed for LSB-first output) in the low 16 and the
 * length in the high 16.
 */
export function deflateEmit(tokens: usize, tokenCount: i32, table: usize, near: u32, pixel: u32, state: usize): void {
  let out = <usize>load<u32>(state);
  let pending: u32 = load<u32>(state + 4);
  let bits: u64 = load<u64>(state + 8);
  const end = tokens + (<usize>tokenCount << 1);
  for (let token = tokens; token < end; ) {
    // A token's bits: a literal's code, or a match's length code with its extra bits and the
    // distance code (one bit: the distance code has two symbols, png-deflate.ts), at most
    // 15 + 5 + 1; or four literals (tokens below 256: no high byte) joined, when their codes fit in
    // the 64 bits beside the (fewer than 8) pending ones, as they do unless rare.
    let packed: u64 = 0;
    let width: u32 = 64;
    if (end - token >= 8 && (load<u64>(token) & 0xff00ff00ff00ff00) == 0) {
      const c0 = load<u32>(table + (<usize>load<u8>(token) << 2));
      const c1 = load<u32>(table + (<usize>load<u8>(token + 2) << 2));
      const c2 = load<u32>(table + (<usize>load<u8>(token + 4) << 2));
      const c3 = load<u32>(table + (<usize>load<u8>(token + 6) << 2));
      const w0 = c0 >>> 16, w01 = w0 + (c1 >>> 16), w012 = w01 + (c2 >>> 16);
      width = w012 + (c3 >>> 16);
      packed = <u64>(c0 & 0xffff) | (<u64>(c1 & 0xffff) << w0) | (<u64>(c2 & 0xffff) << w01) | (<u64>(c3 & 0xffff) << w012);
    }
    if (width <= 57) token += 8;
    else {
      const t = <i32>load<u16>(token);
      token += 2;
      if (t <= nearToken) {
        const code = load<u32>(table + (<usize>t << 2));
        packed = <u64>(code & 0xffff);
        width = code >>> 16;
      } else {
        const distance = t < pixelToken ? near : pixel;
        const symbolAndExtra = lengthSymbol(t - (t < pixelToken ? nearToken : pixelToken));
        const code = load<u32>(table + (<usize>(symbolAndExtra & 0x1ff) << 2));
        const extraBits = (symbolAndExtra >>> 9) & 7;
        packed = <u64>(code & 0xffff) | (<u64>(symbolAndExtra >>> 12) << (code >>> 16)) | (<u64>(distance & 0xffff) << ((code >>> 16) + extraBits));
        width = (code >>> 16) + extraBits + (distance >>> 16);
      }
    }
    // Whole bytes written after every step, without a branch (eight stored, the rest overwritten
    // later): the pending bits stay fewer than 8, so a step's bits always fit.
    bits |= packed << pending;
    pending += width;
    store<u64>(out, bits);
    const bytes = pending >> 3;
    out += <usize>bytes;
    bits >>= <u64>(bytes << 3);
    pending &= 7;
  }
  store<u32>(state, <u32>out);
  store<u32>(state + 4, pending);
  store<u64>(state + 8, bits);
}

// @ts-ignore: decorator
@inline
function count(counts: usize, symbol: u32): void {
  const at = counts + (<usize>symbol << 2);
  store<u32>(at, load<u32>(at) + 1);
}

/**
 * The length symbol of a match of `length` (3…258) (RFC 1951, 3.2.5), with its extra bits: symbol in
 * bits 0–8, extra bit count in 9–11, extra bits from 12 on.
 */
// @ts-ignore: decorator
@inline
export function lengthSymbol(length: i32): u32 {
  if (length == maxMatch) return 285;
  if (length <= 10) return <u32>(254 + length);
  const x = length - 3;
  const extraBits = 29 - <i32>clz(x);
  const symbol = 261 + 4 * extraBits + ((x >> extraBits) - 4);
  return <u32>symbol | (<u32>extraBits << 9) | (<u32>(x & ((1 << extraBits) - 1)) << 12);
}
