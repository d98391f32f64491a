// A PNG put together from bands of scanlines compressed in parallel (cutout-bands.ts): each band is
// a raw deflate stream of its own, all but the last ending on a byte-aligned sync flush, so their
// concatenation is one valid deflate stream (no back-reference crosses a band, each compressor
// having started afresh). The zlib wrapper's Adler-32 is combined from the bands' own.
import zlib from 'node:zlib';

/** One band's scanlines: deflated (raw, level 1), with the Adler-32 and length of what was deflated. */
export interface DeflatedBand {
  deflated: Uint8Array;
  adler32: number;
  length: number;
}

/** Deflates a band's scanlines; `last` ends the stream, the others end on a sync flush. */
export function deflateBand(scanlines: Uint8Array, last: boolean): Uint8Array {
  // Level 1: a third of the time of level 6 for a slightly larger file (the README's figures).
  return zlib.deflateRawSync(scanlines, { level: 1, finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH });
}

const adlerBase = 65521;

/**
 * Adler-32 of the concatenation of two byte strings from theirs and the second's length. With
 * A = 1 + Σ bytes and B = Σ over prefixes of A: A = A₁ + A₂ − 1, and B = B₁ + B₂ + n₂ · (A₁ − 1),
 * since each of the second string's n₂ prefixes counts the whole first string once more.
 */
export function adler32Combine(first: number, second: number, secondLength: number): number {
  const a1 = first & 0xffff, b1 = first >>> 16, a2 = second & 0xffff, b2 = second >>> 16;
  const a = (a1 + a2 + adlerBase - 1) % adlerBase;
  const b = (b1 + b2 + ((secondLength % adlerBase) * ((a1 + adlerBase - 1) % adlerBase)) % adlerBase) % adlerBase;
  return ((b << 16) | a) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(data.length, 0);
  header.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(data, zlib.crc32(header.subarray(4))), 0);
  return Buffer.concat([header, data, crc]);
}

/** An 8-bit RGBA PNG (no interlacing) of width × height from its bands, top to bottom. */
export function pngFromBands(width: number, height: number, bands: DeflatedBand[]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bits per channel
  ihdr[9] = 6; // colour type: RGBA; compression, filter and interlace methods stay 0
  const adler = bands.slice(1).reduce((sum, band) => adler32Combine(sum, band.adler32, band.length), bands[0]?.adler32 ?? 1);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(adler, 0);
  // 0x78 0x01: deflate with a 32 KB window, fastest level; the pair is a multiple of 31 as zlib requires.
  const stream = Buffer.concat([Buffer.from([0x78, 0x01]), ...bands.map((band) => band.deflated), trailer]);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', stream), chunk('IEND', new Uint8Array(0))]);
}
