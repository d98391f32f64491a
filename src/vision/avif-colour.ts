// An AVIF's colours without an ICC profile are described by code points (ITU-T H.273) in an `nclx`
// colour box, which libvips does not read: it takes the decoded RGB as sRGB whatever primaries the
// box names, so a Display P3 or BT.2020 photo came out duller and shifted. Such a file is rewritten
// as the 8-bit PNG of its decoded samples with a profile for those primaries, and that PNG decodes
// like any profiled image (converted to sRGB on load).
import zlib from 'node:zlib';
import sharp, { type Metadata } from 'sharp';
import { matrixShaperProfile, type Chromaticities } from './icc-profile.ts';
import { pngChunk } from './png-file.ts';

/** The fields of an `nclx` colour box (H.273 code points). */
export interface Nclx {
  colourPrimaries: number;
  transferCharacteristics: number;
  matrixCoefficients: number;
  fullRange: boolean;
}

/** Primaries we convert from, by their H.273 code point; both with the D65 white point of sRGB. */
const widePrimaries = {
  9: { name: 'BT.2020', red: [0.708, 0.292], green: [0.17, 0.797], blue: [0.131, 0.046], white: [0.3127, 0.329] },
  12: { name: 'Display P3', red: [0.68, 0.32], green: [0.265, 0.69], blue: [0.15, 0.06], white: [0.3127, 0.329] },
} satisfies Record<number, Chromaticities & { name: string }>;

export type WidePrimaries = keyof typeof widePrimaries;

/**
 * Transfers read as the sRGB curve: sRGB itself (13), and BT.709, BT.601 and BT.2020's (1, 6, 14,
 * 15), which browsers also display with it. HDR ones (PQ 16, HLG 18) are not among them.
 */
const srgbLikeTransfers: ReadonlySet<number> = new Set([1, 6, 13, 14, 15]);

/** The primaries to convert an RGB AVIF from, when it has no ICC profile and its nclx names wider ones than sRGB with an sRGB-like transfer. */
export function widePrimariesOf(input: Buffer, metadata: Metadata): WidePrimaries | undefined {
  if (metadata.format !== 'heif' || metadata.hasProfile || (metadata.space !== 'srgb' && metadata.space !== 'rgb16')) return undefined;
  const nclx = primaryNclx(input);
  if (!nclx || !srgbLikeTransfers.has(nclx.transferCharacteristics)) return undefined;
  return nclx.colourPrimaries === 9 || nclx.colourPrimaries === 12 ? nclx.colourPrimaries : undefined;
}

/**
 * `input` as an upright 8-bit PNG of its decoded samples (quick to write and read: not compressed)
 * carrying a profile for `primaries`. 8-bit because sharp converts a profiled 16-bit source to
 * Display P3 rather than sRGB (decode.ts, sixteenBitProfile).
 */
export async function withPrimariesProfile(input: Buffer, primaries: WidePrimaries, maxPixels: number): Promise<Buffer> {
  const png = await sharp(input, { limitInputPixels: Math.max(1, Math.floor(maxPixels)), ignoreIcc: true })
    .autoOrient()
    .toColourspace('srgb')
    .png({ compressionLevel: 0 })
    .toBuffer();
  const { name, ...chromaticities } = widePrimaries[primaries];
  // Profile name, its terminator, compression method 0 (deflate), then the compressed profile.
  const profile = Buffer.concat([Buffer.from(`${name}\0\0`, 'latin1'), zlib.deflateSync(matrixShaperProfile(name, chromaticities))]);
  // The iCCP chunk goes before the image data: right after the signature (8 bytes) and IHDR (25).
  return Buffer.concat([png.subarray(0, 33), pngChunk('iCCP', profile), png.subarray(33)]);
}

/** The nclx colour box of the primary item, or undefined where there is none or the boxes do not parse. */
export function primaryNclx(file: Uint8Array): Nclx | undefined {
  try {
    const top = boxes(file, 0, file.length);
    if (top.next().value?.type !== 'ftyp') return undefined;
    const meta = find(top, 'meta');
    if (!meta) return undefined;
    const pitm = find(boxes(file, fullBoxBody(file, meta), meta.end), 'pitm');
    const iprp = find(boxes(file, fullBoxBody(file, meta), meta.end), 'iprp');
    if (!pitm || !iprp) return undefined;
    const at = new Reader(file, pitm.start, pitm.end);
    const version = at.u8();
    at.skip(3);
    const primaryItem = version === 0 ? at.u16() : at.u32();
    const ipco = find(boxes(file, iprp.start, iprp.end), 'ipco');
    if (!ipco) return undefined;
    for (const ipma of boxes(file, iprp.start, iprp.end)) {
      if (ipma.type !== 'ipma') continue;
      for (const index of associations(file, ipma, primaryItem)) {
        const property = nth(boxes(file, ipco.start, ipco.end), index - 1);
        if (property?.type === 'colr') {
          const nclx = nclxOf(file, property);
          if (nclx) return nclx;
        }
      }
    }
    return undefined;
  } catch (err) {
    if (err instanceof MalformedBox) return undefined;
    throw err;
  }
}

interface Box {
  type: string;
  /** Where the body starts (after size, type and any 64-bit size) and where the box ends. */
  start: number;
  end: number;
}

class MalformedBox extends Error {}

/** Reads big-endian integers strictly within [position, end). */
class Reader {
  constructor(
    private readonly bytes: Uint8Array,
    private position: number,
    private readonly end: number,
  ) {}

  u8(): number {
    return this.take(1)[0]!;
  }

  u16(): number {
    const [a, b] = this.take(2);
    return (a! << 8) | b!;
  }

  u32(): number {
    return this.u16() * 65536 + this.u16();
  }

  skip(count: number): void {
    this.take(count);
  }

  text(count: number): string {
    return String.fromCharCode(...this.take(count));
  }

  at(): number {
    return this.position;
  }

  private take(count: number): Uint8Array {
    if (this.position + count > this.end) throw new MalformedBox();
    this.position += count;
    return this.bytes.subarray(this.position - count, this.position);
  }
}

/**
 * Where a box is looked for among those filling [start, end): at most the first 100, libheif's
 * limit for a box's children. At the top level libheif reads on, and an upload of 25 MB of empty
 * boxes before its meta took a second and 340 MB to list, and half a second to walk through.
 */
const maxBoxes = 100;

/** The boxes filling [start, end) one after another, read as they are asked for, at most maxBoxes of them. */
function* boxes(bytes: Uint8Array, start: number, end: number): Generator<Box> {
  for (let position = start, count = 0; position < end; count++) {
    if (count === maxBoxes) throw new MalformedBox();
    const at = new Reader(bytes, position, end);
    let size = at.u32();
    const type = at.text(4);
    if (size === 1) size = at.u32() * 2 ** 32 + at.u32();
    else if (size === 0) size = end - position;
    if (size < at.at() - position || position + size > end) throw new MalformedBox();
    yield { type, start: at.at(), end: position + size };
    position += size;
  }
}

function find(found: Iterable<Box>, type: string): Box | undefined {
  for (const box of found) if (box.type === type) return box;
  return undefined;
}

function nth(found: Iterable<Box>, index: number): Box | undefined {
  let at = 0;
  for (const box of found) if (at++ === index) return box;
  return undefined;
}

/** Where a full box's body starts, after its version and flags. */
function fullBoxBody(bytes: Uint8Array, box: Box): number {
  const at = new Reader(bytes, box.start, box.end);
  at.skip(4);
  return at.at();
}

/** The 1-based property indices that an ipma box associates with `item`. */
function associations(bytes: Uint8Array, ipma: Box, item: number): number[] {
  const at = new Reader(bytes, ipma.start, ipma.end);
  const version = at.u8();
  at.skip(2);
  const wideIndices = (at.u8() & 1) === 1;
  for (let entries = at.u32(); entries > 0; entries--) {
    const id = version < 1 ? at.u16() : at.u32();
    const indices: number[] = [];
    for (let count = at.u8(); count > 0; count--) {
      // The top bit says whether the property is essential; the rest is its index (0: none).
      indices.push(wideIndices ? at.u16() & 0x7fff : at.u8() & 0x7f);
    }
    if (id === item) return indices.filter((index) => index > 0);
  }
  return [];
}

function nclxOf(bytes: Uint8Array, colr: Box): Nclx | undefined {
  const at = new Reader(bytes, colr.start, colr.end);
  if (at.text(4) !== 'nclx') return undefined;
  return { colourPrimaries: at.u16(), transferCharacteristics: at.u16(), matrixCoefficients: at.u16(), fullRange: (at.u8() & 0x80) !== 0 };
}
