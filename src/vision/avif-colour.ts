// An AVIF's colours without an ICC profile are described by code points (ITU-T H.273) in an `nclx`
// colour box, which libvips does not read: it takes the decoded RGB as sRGB whatever primaries the
// box names, so a Display P3 or BT.2020 photo came out duller and shifted. Such a file is rewritten
// as the 8-bit PNG of its decoded samples with a profile for those primaries, and that PNG decodes
// like any profiled image (converted to sRGB on load).
import zlib from 'node:zlib';
import sharp, { type Metadata } from 'sharp';
import { matrixShaperProfile, type Chromaticities } from './icc-profile.ts';
import { boxes, find, fullBoxBody, MalformedBox, metaBox, nth, Reader, type Box } from './iso-boxes.ts';
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
    const meta = metaBox(boxes(file, 0, file.length));
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
