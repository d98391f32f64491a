// AssemblyScript (see planes.ts): a large deflate block for PNG scanlines packed as it is scanned,
// with codes made beforehand from the counts of stretches of it (../png-deflate.ts, blockSampling;
// kernels/deflate.ts counts them). Its tokens are deflateScan's, found another way: from bit masks
// of 64 positions at a time, instead of comparing 16 bytes at every stretch of literals and
// searching twice at every match; and each match's bits are looked up, not worked out. In a 12 MP
// cutout most matches are short (98% under 64 bytes) and most stretches of literals 0 or 3 bytes
// long, so that the work at each was most of the time (a throwaway A/B on the 12 MP bench photo's
// scanlines: the same bytes, the pass 8% shorter from the masks and 23% with the lookup too).
import { endOfBlock, lengthSymbol, matchStarts, maxMatch, minMatch, nextPiece, repeats } from './deflate';

/**
 * The tokens deflateScan finds in `length` bytes at `data`, and the end of the block, written as
 * they are found to the bit stream whose state is at `state`, with the codes in `table`, `near`
 * and `pixel` (all as for deflateEmit; every symbol the bytes may need must have a code): no
 * tokens stored, no counting, no second pass over them. `matches` is room for 2 × 259 u32 (2,072 bytes).
 */
export function deflateFused(data: usize, length: i32, table: usize, near: u32, pixel: u32, matches: usize, state: usize): void {
  // Each match length's bits at each distance, looked up instead of worked out per match (its
  // symbol's range of lengths, extra bits and the codes' widths).
  const nearMatches = matches;
  const pixelMatches = matches + (<usize>(maxMatch + 1) << 2);
  for (let length = minMatch - 1; length <= maxMatch; length++) {
    store<u32>(nearMatches + (<usize>length << 2), matchCode(table, length, near));
    store<u32>(pixelMatches + (<usize>length << 2), matchCode(table, length, pixel));
  }
  let out = <usize>load<u32>(state);
  let pending: u32 = load<u32>(state + 4);
  let bits: u64 = load<u64>(state + 8);
  const end = data + <usize>length;
  let at = data;
  // A window of 64 positions from `from`: bit i of `nearMask` says whether byte from + i equals the
  // next, of `pixelMask` whether it equals the byte 4 before, of `starts` whether a match of minMatch
  // begins there (i < windowSpan). Each match and stretch of literals inside it is found from these
  // bits, without another load; the window moves on once `at` reaches `windowEnd`.
  let from: usize = 0;
  let nearMask: u64 = 0;
  let pixelMask: u64 = 0;
  let starts: u64 = 0;
  let windowEnd: usize = 0;
  // Each write adds one piece of the block: up to three literals' codes (45 bits at most), one
  // literal's, or a match's length code, extra bits and distance code (21 at most); beside fewer
  // than 8 pending bits, a piece always fits in the 64 bits stored at once. The write is spelled
  // out at each place: AssemblyScript inlines no function that updates three variables, and one
  // loop over pieces of every kind measured slower.
  while (at < end) {
    let run: usize, pixelRun: usize;
    if (at < windowEnd || (end - at >= 65 && at - data >= 4)) {
      if (at >= windowEnd) {
        from = at;
        windowEnd = at + windowSpan;
        nearMask = equalMask(at, at + 1);
        pixelMask = equalMask(at, at - 4);
        starts = matchStarts<u64>(nearMask, pixelMask) & ((<u64>1 << windowSpan) - 1);
      }
      const ahead = starts >> <u64>(at - from);
      const stop = ahead == 0 ? windowEnd : at + <usize>ctz(ahead);
      while (at < stop) {
        const c0 = load<u32>(table + (<usize>load<u8>(at) << 2));
        let packed = <u64>(c0 & 0xffff);
        let width = c0 >>> 16;
        if (stop - at >= 2) {
          const c1 = load<u32>(table + (<usize>load<u8>(at + 1) << 2));
          packed |= <u64>(c1 & 0xffff) << width;
          width += c1 >>> 16;
          if (stop - at >= 3) {
            const c2 = load<u32>(table + (<usize>load<u8>(at + 2) << 2));
            packed |= <u64>(c2 & 0xffff) << width;
            width += c2 >>> 16;
            at += 3;
          } else at += 2;
        } else at += 1;
        bits |= packed << pending;
        pending += width;
        store<u64>(out, bits);
        const bytes = pending >> 3;
        out += <usize>bytes;
        bits >>= <u64>(bytes << 3);
        pending &= 7;
      }
      if (ahead == 0) continue;
      // A match begins here: the bits give its length up to the window's end, repeats beyond it.
      const offset = <u64>(at - from);
      run = <usize>ctz(~(nearMask >> offset)) + 1;
      pixelRun = <usize>ctz(~(pixelMask >> offset));
      if (run == 65 - <usize>offset) run += repeats(from + 64, from + 65, end);
      if (pixelRun == 64 - <usize>offset) pixelRun += repeats(from + 64, from + 60, end);
    } else {
      // The first bytes and the last: compared from here, without a window.
      run = repeats(at, at + 1, end) + 1;
      pixelRun = at - data >= 4 ? repeats(at, at - 4, end) : 0;
    }
    const literal = run < <usize>minMatch && pixelRun < <usize>minMatch;
    let rest: i32 = 0;
    // The match codes of the match's distance (nearMatches or pixelMatches).
    let codes: usize = 0;
    if (!literal && pixelRun >= run) {
      rest = <i32>pixelRun;
      codes = pixelMatches;
      at += pixelRun;
    } else {
      const code = load<u32>(table + (<usize>load<u8>(at) << 2));
      bits |= <u64>(code & 0xffff) << pending;
      pending += code >>> 16;
      store<u64>(out, bits);
      const bytes = pending >> 3;
      out += <usize>bytes;
      bits >>= <u64>(bytes << 3);
      pending &= 7;
      if (literal) {
        at++;
        continue;
      }
      rest = <i32>run - 1;
      codes = nearMatches;
      at += run;
    }
    while (rest > 0) {
      const piece = nextPiece(rest);
      rest -= piece;
      const code = load<u32>(codes + (<usize>piece << 2));
      bits |= <u64>(code & 0xffffff) << pending;
      pending += code >>> 24;
      store<u64>(out, bits);
      const bytes = pending >> 3;
      out += <usize>bytes;
      bits >>= <u64>(bytes << 3);
      pending &= 7;
    }
  }
  const code = load<u32>(table + (<usize>endOfBlock << 2));
  bits |= <u64>(code & 0xffff) << pending;
  pending += code >>> 16;
  store<u64>(out, bits);
  const bytes = pending >> 3;
  store<u32>(state, <u32>(out + <usize>bytes));
  store<u32>(state + 4, pending & 7);
  store<u64>(state + 8, bits >> <u64>(bytes << 3));
}

/** A match of `length` at the distance whose code is `distance`: its bits (21 at most) in the low 24, their count in the high 8. */
function matchCode(table: usize, length: i32, distance: u32): u32 {
  const symbolAndExtra = lengthSymbol(length);
  const code = load<u32>(table + (<usize>(symbolAndExtra & 0x1ff) << 2));
  const extraBits = (symbolAndExtra >>> 9) & 7;
  const bits = (code & 0xffff) | ((symbolAndExtra >>> 12) << (code >>> 16)) | ((distance & 0xffff) << ((code >>> 16) + extraBits));
  return bits | (((code >>> 16) + extraBits + (distance >>> 16)) << 24);
}

/** Positions of a window at which a match can be seen to begin: the last three of its 64 lack the bits that would tell. */
const windowSpan: usize = 61;

/** Bit i set where the byte at a + i equals the one at b + i, for i < 64. */
// @ts-ignore: decorator
@inline
function equalMask(a: usize, b: usize): u64 {
  const m0 = <u64>i8x16.bitmask(i8x16.eq(v128.load(a), v128.load(b)));
  const m1 = <u64>i8x16.bitmask(i8x16.eq(v128.load(a + 16), v128.load(b + 16)));
  const m2 = <u64>i8x16.bitmask(i8x16.eq(v128.load(a + 32), v128.load(b + 32)));
  const m3 = <u64>i8x16.bitmask(i8x16.eq(v128.load(a + 48), v128.load(b + 48)));
  return m0 | (m1 << 16) | (m2 << 32) | (m3 << 48);
}
