// The PNG file around image data that the band threads compressed in parallel (png-scanlines.ts).
// A PNG's pixels are one zlib stream, which may be split across IDAT chunks anywhere. Each band
// brings raw deflate data that ends byte-aligned and not final (as zlib's sync flush ends it), so
// the bands' data can follow one another; the file adds the zlib header before them and, after
// them, an empty final block and the Adler-32 of all scanlines, combined from the bands' own.
import zlib from 'node:zlib';

/** One band's compressed scanlines. */
export interface PngBand {
  /** Whole IDAT chunks (length, type, data, CRC) of raw deflate data, ending with a sync flush. */
  chunks: Uint8Array;
  /** Adler-32 of the band's scanlines. */
  adler: number;
  /** The band's scanline bytes: rows × (1 + 4 · width). */
  length: number;
}

const signature = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
/** Deflate with a 32 KB window, marked as compressed for speed; (0x78 · 256 + 0x01) is a multiple of 31 as zlib requires. */
const zlibHeader = Uint8Array.of(0x78, 0x01);
/** A final block with fixed codes and no data: BFINAL 1, BTYPE 01, then the 7-bit end-of-block code. */
const emptyFinalBlock = Uint8Array.of(0x03, 0x00);
const adlerModulus = 65521;

/** A PNG chunk: data length, type, data and the CRC-32 of type and data. */
export function pngChunk(type: string, data: Uint8Array): Buffer {
  const chunk = Buffer.allocUnsafe(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  chunk.set(data, 8);
  chunk.writeUInt32BE(zlib.crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/**
 * The Adler-32 of two byte runs one after the other, from each one's own: with s1 = 1 + Σb and
 * s2 = Σ of s1 after each byte, the second run's s1 values are all raised by the first's s1 − 1.
 */
export function adler32Combine(first: number, second: number, secondLength: number): number {
  const s1First = first & 0xffff, s2First = first >>> 16;
  const s1 = (s1First + (second & 0xffff) + adlerModulus - 1) % adlerModulus;
  const s2 = (s2First + (second >>> 16) + ((secondLength % adlerModulus) * (s1First + adlerModulus - 1)) % adlerModulus) % adlerModulus;
  return (s2 * 65536 + s1) >>> 0;
}

/** The PNG file of an 8-bit RGBA image from its bands' compressed scanlines, top to bottom. */
export function assemblePng(width: number, height: number, bands: PngBand[]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per sample
  header[9] = 6; // colour type: RGB with alpha
  // Compression method, filter method and interlacing (bytes 10–12) are all 0: deflate, adaptive per row, none.
  const adler = bands.reduce((sum, band) => adler32Combine(sum, band.adler, band.length), 1);
  const trailer = Buffer.alloc(emptyFinalBlock.length + 4);
  trailer.set(emptyFinalBlock);
  trailer.writeUInt32BE(adler, emptyFinalBlock.length);
  return Buffer.concat([
    signature,
    pngChunk('IHDR', header),
    pngChunk('IDAT', zlibHeader),
    ...bands.map((band) => band.chunks),
    pngChunk('IDAT', trailer),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}
