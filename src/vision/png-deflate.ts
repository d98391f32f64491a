// Deflate for a band's PNG scanlines (RFC 1951): one block with Huffman codes of its own per chunk
// of rows, whose tokens are literals, runs and repeated pixels (kernels/deflate.ts finds and packs
// them, for a large chunk in one pass; this module builds the codes and writes the block header).
// `npm run bench` compares it with zlib at level 1 in the same bands, and with sharp's PNG.
import type { KernelExports } from './kernels.ts';

const literalLengthSymbols = 286;
/** The scan counts literals in this many tables (kernels/deflate.ts) and adds them into the first. */
const histogramCount = 4;
/**
 * A block of at least `from` bytes (a band's chunk of rows, above the smallest photos) is written in
 * the same pass as its scan (kernels/deflate-fused.ts), with codes made from the counts of
 * stretches of `bytes` every `stride` bytes, an eighth of it (kernels/deflate.ts, deflateSample);
 * every symbol gets a code (codeLengths, everySymbol), since the stretches may miss some that the
 * rest uses. A smaller block is counted in full and written from its tokens. `npm run bench`
 * compares the two ways (its PNG table, `counted`); the stretches' size and spacing were chosen in
 * a throwaway comparison of several.
 */
export const blockSampling = { from: 256 << 10, bytes: 2 << 10, stride: 16 << 10 };
/** Matches are at distance 1 (distance code 0) or 4 (code 3): one bit each, the same in every block. */
const distanceLengths = Uint8Array.of(1, 0, 0, 1);
const distanceCodes = packedCodes(distanceLengths);
/** The order in which a dynamic block lists its code-length code's lengths (RFC 1951, 3.2.7). */
const codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/**
 * Huffman code lengths for `counts` of at most `limit` bits, 0 for a symbol never used. Only a
 * symbol with less than 1/F(limit + 2) of the total (F: Fibonacci) can end up deeper than the limit;
 * every count is first raised to 1/F(limit + 5) of the total, which keeps most codes within it at
 * little cost (a floor of 1/F(limit + 2), which would always suffice, gives the many rare symbols
 * codes so short that the files grow), and where the code is still too long the counts are halved
 * until it fits. In typed arrays and plain loops: a band thread builds codes for every block it
 * writes (dozens for a 12 MP cutout), and a CPU profile of the bands' work (run on one thread) put
 * arrays of numbers, closures and mapping calls here among the JavaScript it spent most in.
 * With `everySymbol`, a symbol never counted gets a code too, as for a count of 1 left as it is (a
 * long code: counts from part of a block, where the rest may use any symbol).
 */
export function codeLengths(counts: ArrayLike<number>, limit: number, everySymbol = false): Uint8Array {
  const lengths = new Uint8Array(counts.length);
  const used = new Int32Array(counts.length);
  let usedCount = 0;
  let total = 0;
  for (let symbol = 0; symbol < counts.length; symbol++) {
    if (counts[symbol]! > 0 || everySymbol) used[usedCount++] = symbol;
    total += counts[symbol]!;
  }
  // A code of one symbol still takes one bit, and a second length-1 code keeps it complete, as inflaters require.
  if (usedCount === 1) {
    lengths[used[0]!] = 1;
    lengths[used[0] === 0 ? 1 : 0] = 1;
  }
  if (usedCount <= 1) return lengths;
  const least = Math.ceil(total / fibonacci(limit + 5));
  const weights = new Float64Array(usedCount);
  for (let i = 0; i < usedCount; i++) {
    const count = counts[used[i]!]!;
    weights[i] = count === 0 ? 1 : Math.max(count, least);
  }
  const depths = new Int32Array(usedCount);
  for (;;) {
    if (huffmanDepths(weights, depths) <= limit) {
      for (let i = 0; i < usedCount; i++) lengths[used[i]!] = depths[i]!;
      return lengths;
    }
    for (let i = 0; i < usedCount; i++) weights[i] = Math.max(1, Math.floor(weights[i]! / 2));
  }
}

function fibonacci(n: number): number {
  let [a, b] = [0, 1];
  for (let i = 0; i < n; i++) [a, b] = [b, a + b];
  return a;
}

/**
 * The depth of each leaf in a Huffman tree over `weights` (at least two), written to `depths`;
 * returns the deepest. Leaves in order of weight, then of index, merged with the inner nodes from
 * two sorted queues (a leaf first where weights tie).
 */
function huffmanDepths(weights: Float64Array, depths: Int32Array): number {
  const n = weights.length;
  // Weight and index in one number, so that a numeric sort orders by weight and then by index: the
  // weights are whole, far below 2⁴⁴ (a block's bytes), and there are fewer than 512 symbols.
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = weights[i]! * 512 + i;
  keys.sort();
  const weight = new Float64Array(2 * n - 1);
  const parent = new Int32Array(2 * n - 1);
  for (let i = 0; i < n; i++) weight[i] = weights[i]!;
  let leaf = 0;
  let inner = n;
  let made = n;
  const lightest = (): number => {
    if (leaf < n) {
      const candidate = keys[leaf]! % 512;
      if (inner >= made || weight[candidate]! <= weight[inner]!) {
        leaf++;
        return candidate;
      }
    }
    return inner++;
  };
  while (made < 2 * n - 1) {
    const a = lightest();
    const b = lightest();
    parent[a] = parent[b] = made;
    weight[made] = weight[a]! + weight[b]!;
    made++;
  }
  const depth = new Int32Array(2 * n - 1);
  let deepest = 0;
  for (let node = 2 * n - 3; node >= 0; node--) {
    depth[node] = depth[parent[node]!]! + 1;
    if (node < n && depth[node]! > deepest) deepest = depth[node]!;
  }
  depths.set(depth.subarray(0, n));
  return deepest;
}

/** The canonical codes for `lengths` (RFC 1951, 3.2.2), each packed as the kernel puts it: bits reversed for LSB-first output in the low 16, length in the high 16. */
export function packedCodes(lengths: Uint8Array): Uint32Array {
  const perLength = new Uint16Array(16);
  for (let i = 0; i < lengths.length; i++) if (lengths[i]! > 0) perLength[lengths[i]!]!++;
  const next = new Uint16Array(16);
  for (let length = 1, code = 0; length < 16; length++) {
    code = (code + perLength[length - 1]!) << 1;
    next[length] = code;
  }
  const packed = new Uint32Array(lengths.length);
  for (let i = 0; i < lengths.length; i++) {
    const length = lengths[i]!;
    if (length === 0) continue;
    const code = next[length]!++;
    let reversed = 0;
    for (let bit = 0; bit < length; bit++) reversed |= ((code >> bit) & 1) << (length - 1 - bit);
    packed[i] = reversed | (length << 16);
  }
  return packed;
}

function lastIndexWhere(values: ArrayLike<number>, test: (value: number) => boolean): number {
  for (let i = values.length - 1; i >= 0; i--) if (test(values[i]!)) return i;
  return -1;
}

/** The lengths as code-length symbols (RFC 1951, 3.2.7): [symbol, extra bits, extra bit count] with runs as 16, 17 and 18. */
function codeLengthTokens(lengths: Uint8Array): [number, number, number][] {
  const tokens: [number, number, number][] = [];
  for (let i = 0; i < lengths.length; ) {
    const value = lengths[i]!;
    let run = 1;
    while (i + run < lengths.length && lengths[i + run] === value) run++;
    i += run;
    if (value === 0) {
      for (; run >= 11; run -= Math.min(run, 138)) tokens.push([18, Math.min(run, 138) - 11, 7]);
      if (run >= 3) tokens.push([17, run - 3, 3]);
      else for (; run > 0; run--) tokens.push([0, 0, 0]);
      continue;
    }
    tokens.push([value, 0, 0]);
    for (run--; run >= 3; run -= Math.min(run, 6)) tokens.push([16, Math.min(run, 6) - 3, 2]);
    for (; run > 0; run--) tokens.push([value, 0, 0]);
  }
  return tokens;
}

/**
 * A deflate stream written a block per call, each ending mid-byte; `flush` ends it byte-aligned and
 * not final, as zlib's Z_SYNC_FLUSH does, so that streams written in separate threads join into one.
 * Its places in the kernels' memory: `stateAt` (16 bytes), `tablesAt` (tablesSize) and, for the
 * largest block, `tokensAt` (tokensSize) and `outAt` (blockBound).
 */
export class DeflateStream {
  constructor(
    private readonly kernels: KernelExports,
    memory: ArrayBuffer,
    private readonly stateAt: number,
    private readonly tablesAt: number,
    private readonly tokensAt: number,
    private readonly outAt: number,
    /** Every block counted in full and written from its tokens, whatever its size (the bench's comparison). */
    private readonly countEveryBlock = false,
  ) {
    // The memory is the thread's and was used before: the stream starts empty at the output area.
    const state = new DataView(memory, stateAt, 16);
    state.setUint32(0, outAt, true);
    state.setUint32(4, 0, true);
    state.setBigUint64(8, 0n, true);
  }

  /** Bytes of the kernels' memory at tablesAt. */
  static readonly tablesSize = (histogramCount + 1) * literalLengthSymbols * 4;

  /** Room for the tokens of a block of `length` bytes, or of its stretches (blockSampling): one u16 per byte at most, and the end of the block. */
  static tokensSize(length: number, countEveryBlock = false): number {
    return 2 * (countEveryBlock ? length : Math.min(length, blockSampling.from)) + 2;
  }

  /** Output room a block of `length` bytes can need: at most 15 bits per byte, and its header. */
  static blockBound(length: number): number {
    return Math.ceil((length * 15) / 8) + 1024;
  }

  /** The stream's next block for `length` bytes at `dataAt`; returns its whole bytes written so far (a view, valid until the next call). */
  block(memory: ArrayBuffer, dataAt: number, length: number): Uint8Array {
    const k = this.kernels;
    const countsAt = this.tablesAt;
    const tableAt = this.tablesAt + histogramCount * literalLengthSymbols * 4;
    const sampled = length >= blockSampling.from && !this.countEveryBlock;
    let tokenCount = 0;
    new Uint32Array(memory, countsAt, histogramCount * literalLengthSymbols).fill(0);
    // The stretches' counts, with the end of the block's 1; or the whole block's, and its tokens.
    if (sampled) k.deflateSample(dataAt, length, blockSampling.stride, blockSampling.bytes, countsAt, this.tokensAt);
    else tokenCount = k.deflateScan(dataAt, length, countsAt, this.tokensAt);
    const counts = new Uint32Array(memory, countsAt, literalLengthSymbols);
    const literals = codeLengths(counts, 15, sampled);
    const literalCount = Math.max(257, lastIndexWhere(literals, (length) => length > 0) + 1);
    const tokens = codeLengthTokens(Uint8Array.from([...literals.subarray(0, literalCount), ...distanceLengths]));
    const tokenCounts = new Array<number>(19).fill(0);
    for (const [symbol] of tokens) tokenCounts[symbol]!++;
    const tokenLengths = codeLengths(tokenCounts, 7);
    const tokenCodes = packedCodes(tokenLengths);
    const listed = Math.max(4, lastIndexWhere(codeLengthOrder, (symbol) => tokenLengths[symbol]! > 0) + 1);

    const writer = this.writer(memory);
    // Not the last block (the file ends the stream, png-file.ts); Huffman codes of its own (type 2).
    writer.put(0, 1);
    writer.put(2, 2);
    writer.put(literalCount - 257, 5);
    writer.put(distanceLengths.length - 1, 5);
    writer.put(listed - 4, 4);
    for (const symbol of codeLengthOrder.slice(0, listed)) writer.put(tokenLengths[symbol]!, 3);
    for (const [symbol, extra, extraBits] of tokens) {
      writer.code(tokenCodes[symbol]!);
      writer.put(extra, extraBits);
    }
    writer.save();
    new Uint32Array(memory, tableAt, literalLengthSymbols).set(packedCodes(literals));
    // The counts are no longer needed: their tables are the fused pass's room for its match codes.
    if (sampled) k.deflateFused(dataAt, length, tableAt, distanceCodes[0]!, distanceCodes[3]!, countsAt, this.stateAt);
    else k.deflateEmit(this.tokensAt, tokenCount, tableAt, distanceCodes[0]!, distanceCodes[3]!, this.stateAt);
    return this.taken(memory);
  }

  /** Ends the stream byte-aligned and not final (an empty stored block); returns its last bytes. */
  flush(memory: ArrayBuffer): Uint8Array {
    const writer = this.writer(memory);
    writer.put(0, 3);
    writer.align();
    for (const byte of [0, 0, 0xff, 0xff]) writer.put(byte, 8);
    writer.save();
    return this.taken(memory);
  }

  /** The whole bytes written since the last call, from the start of the output area, which they leave for the next. */
  private taken(memory: ArrayBuffer): Uint8Array {
    const state = new Uint32Array(memory, this.stateAt, 2);
    const bytes = new Uint8Array(memory, this.outAt, state[0]! - this.outAt);
    state[0] = this.outAt;
    return bytes;
  }

  /** A JavaScript writer on the same bit stream as the kernel (its state at stateAt: address, bit count, pending bits). */
  private writer(memory: ArrayBuffer) {
    const view = new DataView(memory);
    const { stateAt } = this;
    let out = view.getUint32(stateAt, true);
    let count = view.getUint32(stateAt + 4, true);
    let bits = view.getUint32(stateAt + 8, true);
    const bytes = new Uint8Array(memory);
    const put = (value: number, width: number): void => {
      bits |= value << count;
      count += width;
      while (count >= 8) {
        bytes[out++] = bits & 0xff;
        bits >>>= 8;
        count -= 8;
      }
    };
    return {
      put,
      code: (packed: number) => put(packed & 0xffff, packed >>> 16),
      align: () => {
        if (count > 0) put(0, 8 - count);
      },
      save: () => {
        view.setUint32(stateAt, out, true);
        view.setUint32(stateAt + 4, count, true);
        view.setBigUint64(stateAt + 8, BigInt(bits), true);
      },
    };
  }
}
