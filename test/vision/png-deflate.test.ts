// The deflate encoder for PNG scanlines (png-deflate.ts, kernels/deflate.ts): what it writes inflates
// to the bytes given, whatever they are, block after block and stream after stream.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { kernelsWith } from '../../src/vision/kernels.ts';
import { blockSampling, codeLengths, DeflateStream, packedCodes } from '../../src/vision/png-deflate.ts';

/** Deterministic bytes, so a failure reproduces. */
function pseudoRandom(count: number, seed: number): Uint8Array {
  let state = seed;
  return Uint8Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state >>> 23;
  });
}

/**
 * Byte values 6–17 counted as Fibonacci numbers times 6, laid out so that none repeats into a run or
 * a repeated pixel (all stay literals), then 0–5 once each in a row: those get codes of the length
 * limit, and four of them take more bits than the kernel's 64-bit writes hold beside what is pending.
 */
function rareInARow(): Uint8Array {
  const left = new Map<number, number>();
  for (let v = 6, a = 1, b = 2; v < 18; v++, [a, b] = [b, a + b]) left.set(v, 6 * a);
  const out: number[] = [];
  const matches = (v: number): boolean => {
    const n = out.length;
    const run = n >= 3 && out[n - 1] === v && out[n - 2] === v && out[n - 3] === v;
    const pixel = n >= 7 && out[n - 4] === v && out[n - 5] === out[n - 1] && out[n - 6] === out[n - 2] && out[n - 7] === out[n - 3];
    return run || pixel;
  };
  for (;;) {
    const next = [...left].filter(([v, count]) => count > 0 && !matches(v)).sort((x, y) => y[1] - x[1])[0];
    if (!next) break;
    out.push(next[0]);
    left.set(next[0], next[1] - 1);
  }
  return Uint8Array.from([...out, 0, 1, 2, 3, 4, 5, 6, 7]);
}

/**
 * Rows of a cutout as Up-filtered scanlines might look: clear rows of zeros, then rows where
 * pixels repeat the one before for a while, runs, and noise, each row starting with its filter byte.
 */
function scanlineLike(count: number): Uint8Array {
  const noise = pseudoRandom(count, 8);
  const out = new Uint8Array(count);
  const rowBytes = 4 * 1000 + 1;
  for (let i = 0; i < count; i++) {
    const x = i % rowBytes;
    const row = Math.floor(i / rowBytes);
    if (x === 0) out[i] = 2;
    else if (row % 7 === 0) out[i] = 0;
    else if (x % 400 < 150) out[i] = (x - 1) % 4 === 3 ? 0 : ((row * 13 + ((x - 1) % 4) * 5) & 255);
    else if (x % 400 < 220) out[i] = row & 255;
    else out[i] = noise[i]! & 7;
  }
  return out;
}

/**
 * A large block whose codes are counted from stretches of it (blockSampling): two values in those
 * stretches, and between them noise, bytes found nowhere else and matches of lengths found nowhere
 * else (a run of 77, a pixel repeated for 196 bytes).
 */
function rareBetweenStretches(): Uint8Array {
  const { from, bytes, stride } = blockSampling;
  const out = pseudoRandom(from + 5 * stride, 9).map((v) => v & 3);
  for (let at = 0; at < out.length; at += stride) out.fill((at / stride) % 2, at, at + bytes);
  const between = (k: number): number => k * stride + bytes + 100;
  out.set([0xab, 0xcd, 0xef, 0x99], between(1));
  out.fill(200, between(2), between(2) + 77);
  out.set(Uint8Array.from({ length: 200 }, (_, i) => [10, 20, 30, 40][i % 4]!), between(3));
  return out;
}

/**
 * A large block (packed as it is scanned) of runs of every length from 1 to 300 and pixels repeated
 * for every length from 1 to 300 bytes, each after a few literals, so that matches begin and end at
 * every place of the kernel's 64-byte windows and go past their ends by every amount.
 */
function matchesOfEveryLengthAndPlace(): Uint8Array {
  const out: number[] = [];
  let value = 0;
  const literal = (): void => {
    value = (value + 97) & 255;
    out.push(value);
  };
  while (out.length < blockSampling.from + 100_000) {
    for (let length = 1; length <= 300; length++) {
      for (let k = 0; k <= length % 5; k++) literal();
      out.push(...new Array<number>(length).fill(length & 255));
      for (let k = 0; k <= length % 3; k++) literal();
      const pixel = out.slice(-4);
      for (let k = 0; k < length; k++) out.push(pixel[k % 4]!);
    }
  }
  return Uint8Array.from(out);
}

/**
 * Each of `blocks` deflated as one block of a stream, then the stream flushed: the stream's bytes.
 * The memory around the data holds `around` (left there by an earlier stream, say).
 */
function deflate(blocks: Uint8Array[], around = 0xa5): Buffer {
  const largest = Math.max(1, ...blocks.map((b) => b.length));
  const dataAt = 64;
  const stateAt = dataAt + Math.ceil(largest / 16) * 16;
  const tablesAt = stateAt + 16;
  const tokensAt = tablesAt + DeflateStream.tablesSize;
  const outAt = tokensAt + Math.ceil(DeflateStream.tokensSize(largest) / 16) * 16;
  const { kernels, memory } = kernelsWith(outAt + DeflateStream.blockBound(largest));
  new Uint8Array(memory).fill(around, 0, outAt + DeflateStream.blockBound(largest));
  const stream = new DeflateStream(kernels, memory, stateAt, tablesAt, tokensAt, outAt);
  const parts = blocks.map((block) => {
    new Uint8Array(memory, dataAt, block.length).set(block);
    return Buffer.from(stream.block(memory, dataAt, block.length));
  });
  parts.push(Buffer.from(stream.flush(memory)));
  return Buffer.concat(parts);
}

/** A stream ends byte-aligned and not final; the empty final block a PNG file adds (png-file.ts) ends it. */
function inflate(stream: Buffer): Buffer {
  return zlib.inflateRawSync(Buffer.concat([stream, Buffer.of(0x03, 0x00)]));
}

describe('deflate for PNG scanlines', () => {
  const cases: [string, Uint8Array][] = [
    ['nothing', new Uint8Array(0)],
    ['one byte', Uint8Array.of(7)],
    ['three equal bytes', Uint8Array.of(0, 0, 0)],
    ['four equal bytes', Uint8Array.of(9, 9, 9, 9)],
    ['a run just past a full-length match', new Uint8Array(1 + 258 + 2)],
    ['runs of every length from 1 to 600', Uint8Array.from(Array.from({ length: 600 }, (_, n) => new Array<number>(n + 1).fill(n % 251)).flat())],
    ['random bytes', pseudoRandom(100_003, 1)],
    ['pixels repeating the one before, with changes', Uint8Array.from({ length: 90_001 }, (_, i) => (i % 4 === 3 ? 0 : ((i >> 5) * 37 + (i % 4) * 11) & 255))],
    ['zeros with scattered values', Uint8Array.from(pseudoRandom(70_000, 2), (v) => (v > 240 ? v : 0))],
    ['literals with the longest codes, several in a row', rareInARow()],
    ['a large block of scanline-like rows (packed as it is scanned)', scanlineLike(blockSampling.from + 300_000)],
    ['a large block whose rarest bytes and matches lie between the counted stretches', rareBetweenStretches()],
    ['a large block of runs and repeated pixels of every length from 1 to 300, at every place', matchesOfEveryLengthAndPlace()],
    ['large random bytes', pseudoRandom(blockSampling.from + 100_003, 7)],
  ];
  for (const [name, bytes] of cases) {
    it(`inflates back to the bytes given: ${name}`, () => {
      const stream = deflate([bytes]);
      assert.ok(inflate(stream).equals(bytes));
      // Ended as zlib's sync flush ends a stream: an empty stored block.
      assert.deepEqual([...stream.subarray(-4)], [0, 0, 0xff, 0xff]);
      assert.ok(stream.length <= DeflateStream.blockBound(bytes.length) + 5);
    });
  }

  it('writes smaller output than the input where bytes repeat, and not much larger where they do not', () => {
    assert.ok(deflate([new Uint8Array(100_000)]).length < 1_000);
    assert.ok(deflate([pseudoRandom(100_000, 3)]).length < 100_000 * 1.01 + 300);
    // Large blocks, packed with codes counted from stretches of them.
    const large = 4 * blockSampling.from;
    assert.ok(deflate([new Uint8Array(large)]).length < large / 200);
    assert.ok(deflate([pseudoRandom(large, 10)]).length < large * 1.01 + 300);
  });

  it('continues a stream block after block, each block mid-byte where the last ended', () => {
    const blocks = [pseudoRandom(5_000, 4), scanlineLike(blockSampling.from + 40_001), new Uint8Array(3_000), Uint8Array.of(1, 2, 3), scanlineLike(blockSampling.from), pseudoRandom(17, 5).map((v) => v & 3)];
    assert.ok(inflate(deflate(blocks)).equals(Buffer.concat(blocks)));
  });

  it('makes streams that join: nothing refers to bytes before its own data', () => {
    // Were the second stream to copy from before its start, where its thread's memory holds zeros
    // like its data, the joined stream would copy the first one's bytes instead.
    const first = pseudoRandom(1_000, 6);
    const second = new Uint8Array(2_000);
    const joined = Buffer.concat([deflate([first]), deflate([second], 0)]);
    assert.ok(inflate(joined).equals(Buffer.concat([first, second])));
  });
});

describe('the Huffman codes of a block', () => {
  it('are canonical and sent LSB first (RFC 1951 3.2.2: lengths 3,3,3,3,3,2,4,4 give 010 … 1111)', () => {
    const codes = packedCodes(Uint8Array.of(3, 3, 3, 3, 3, 2, 4, 4));
    const written = [...codes].map((packed) => {
      const length = packed >>> 16;
      let code = 0;
      for (let i = 0; i < length; i++) code |= ((packed >> i) & 1) << (length - 1 - i);
      return code.toString(2).padStart(length, '0');
    });
    assert.deepEqual(written, ['010', '011', '100', '101', '110', '00', '1110', '1111']);
  });

  it('stay within the length limit and complete, even for counts that would make a deep tree', () => {
    const fibonacci = [1, 1];
    while (fibonacci.length < 40) fibonacci.push(fibonacci.at(-1)! + fibonacci.at(-2)!);
    for (const [counts, limit] of [[fibonacci, 15], [fibonacci.slice(0, 19), 7], [[1000, 100, 10, 1], 2], [[5, 0, 0, 9], 15], [[0, 12], 7]] as const) {
      const lengths = codeLengths(counts, limit);
      assert.ok(Math.max(...lengths) <= limit, `longest ${Math.max(...lengths)} over ${limit}`);
      assert.ok(counts.every((count, symbol) => count === 0 || lengths[symbol]! > 0), 'every used symbol has a code');
      const kraft = [...lengths].reduce((sum, length) => sum + (length > 0 ? 2 ** -length : 0), 0);
      assert.equal(kraft, 1, 'the code is complete');
    }
  });

  it('give every symbol a code when asked to, the uncounted ones no shorter than the rarest counted one', () => {
    // Counts as from part of a block: a few common symbols, many never seen there.
    const counts = Array.from({ length: 286 }, (_, symbol) => (symbol < 4 ? 100_000 >> symbol : symbol === 256 ? 1 : symbol % 50 === 0 ? 40 : 0));
    const lengths = codeLengths(counts, 15, true);
    assert.ok(lengths.every((length) => length > 0 && length <= 15), 'every symbol has a code within the limit');
    const kraft = [...lengths].reduce((sum, length) => sum + 2 ** -length, 0);
    assert.equal(kraft, 1, 'the code is complete');
    const rarestCounted = Math.max(...counts.map((count, symbol) => (count > 0 ? lengths[symbol]! : 0)));
    assert.ok(counts.every((count, symbol) => count > 0 || lengths[symbol]! >= rarestCounted - 1), 'uncounted symbols take long codes');
    assert.ok(lengths[0]! <= 2, `the commonest symbol keeps a short code, not ${lengths[0]}`);
  });
});
