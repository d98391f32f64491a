// Which sample formats a source may have, and how one libvips would misread becomes 8-bit first.
// libvips reads 8 and 16-bit integers by their range, but takes 32-bit integers and greyscale
// floats at face value against 0–255 (a 32-bit photo clips to white, a 0–1 float one to black),
// and casts float samples to 8-bit integers before applying an ICC profile. Such a source (TIFF is
// the only format that holds one) is rewritten as the 8-bit image it stands for and then decoded
// like any other: the rescaling has to come before the profile, which sharp applies as it loads
// (and before its conversion of CMYK to sRGB, which it also makes as it loads).
import sharp, { type Metadata } from 'sharp';
import { TaskError } from '../domain/errors.ts';

/** How a source's samples become 8-bit. */
export interface DeepSamples {
  /** `8-bit value = sample × scale + offset`, truncated, in every band (alpha too); absent where libvips' own conversion does it. */
  rescale?: { bands: number; scale: number; offset: number };
  /** Whether the embedded ICC profile, if any, still describes the rescaled samples. */
  keepsProfile: boolean;
  /** Set for CMYK samples, rewritten as CMYK: a PNG cannot hold them. */
  cmyk?: boolean;
}

/** Undefined for 8 and 16-bit sources and CIELAB, which decode as they are; refuses formats with no agreed meaning. */
export function deepSamples(metadata: Metadata): DeepSamples | undefined {
  switch (metadata.depth) {
    case 'uchar':
    case 'ushort':
      return undefined;
    case 'uint':
      // 0 to 2³²−1 as 0 to 255: the top 8 bits.
      return { rescale: { bands: metadata.channels, scale: 2 ** -24, offset: 0 }, keepsProfile: true, cmyk: metadata.space === 'cmyk' };
    case 'short':
      // libvips reads a 16-bit CIELAB TIFF as signed LabS, whose range it knows and converts itself.
      if (metadata.space === 'labs') return undefined;
      return refused(metadata.depth);
    case 'float':
      // CIELAB (and LogLuv, read as XYZ) floats hold absolute values that libvips converts itself,
      // not 0–1 intensities: rescaling them would make other colours.
      if (metadata.space === 'lab' || metadata.space === 'xyz') return undefined;
      // Ink amounts as floats have no agreed range: ImageMagick writes 0–1, Krita 0–100 (as lcms
      // takes them), libvips reads 0–255. Any one reading turns the others' files nearly black or white.
      if (metadata.space === 'cmyk') {
        throw new TaskError('unsupported_image', 'CMYK TIFF images with float samples are not supported (programs disagree on their range); send 8, 16 or 32-bit unsigned integer samples.');
      }
      // Floats are 0–1 (beyond is clamped). libvips reads RGB ones as linear light (scRGB), as
      // 32-bit editors and HDR merges write them, and converts them itself; greyscale ones it takes
      // as 0–255, so they are scaled (and rounded). It cannot apply a profile to float samples, and
      // sharp cannot hand it the rescaled ones without converting them first, so a profile is left out.
      return metadata.space === 'scrgb' ? { keepsProfile: false } : { rescale: { bands: metadata.channels, scale: 255, offset: 0.5 }, keepsProfile: false };
    default:
      // Signed integers (and complex numbers) come from measuring instruments, not cameras:
      // whether 0 is black or mid-grey is up to the program that wrote them, so any choice would
      // make a plausible but wrong cutout. Saying so lets the sender convert the file themselves.
      return refused(metadata.depth);
  }
}

/**
 * Refuses channels beyond the colours and one alpha (a TIFF's saved selections or spot colours):
 * libvips keeps them through the conversion to sRGB, and the pipeline takes 3 or 4 channels only.
 */
export function assertColourAndAlpha(metadata: Metadata): void {
  const space = spaceNames[metadata.space] ?? 'RGB';
  const colours = space === 'greyscale' ? 1 : space === 'CMYK' ? 4 : 3;
  if (metadata.channels > colours + 1) {
    throw new TaskError('unsupported_image', `TIFF images with channels beyond colour and alpha are not supported (this ${space} one has ${metadata.channels}, where ${colours + 1} hold colour and alpha); save it with at most one alpha channel.`);
  }
}

const spaceNames: Record<string, string> = { 'b-w': 'greyscale', grey16: 'greyscale', cmyk: 'CMYK', lab: 'CIELAB', labs: 'CIELAB' };

function refused(depth: string): never {
  throw new TaskError('unsupported_image', `TIFF images with ${sampleName(depth)} samples are not supported; send 8, 16 or 32-bit unsigned integer or 32-bit float samples.`);
}

/**
 * `input` rewritten as an upright 8-bit PNG (a CMYK source as an uncompressed TIFF), quick to write
 * and read, keeping an ICC profile that still applies.
 */
export function eightBit(input: Buffer, { rescale, keepsProfile, cmyk }: DeepSamples, maxPixels: number): Promise<Buffer> {
  let photo = sharp(input, { limitInputPixels: Math.max(1, Math.floor(maxPixels)), ignoreIcc: true }).autoOrient();
  // Kept CMYK through the rescaling: sharp would otherwise convert the samples, unscaled, to sRGB
  // as it loads them, leaving the rescaling 3 bands for its 4 or 5 factors (an error).
  if (cmyk) photo = photo.pipelineColourspace('cmyk');
  // One factor per band: given one, sharp would leave the alpha band as it was.
  if (rescale) photo = photo.linear(Array<number>(rescale.bands).fill(rescale.scale), Array<number>(rescale.bands).fill(rescale.offset));
  if (keepsProfile) photo = photo.keepIccProfile();
  return cmyk ? photo.toColourspace('cmyk').tiff({ compression: 'none' }).toBuffer() : photo.png({ compressionLevel: 0 }).toBuffer();
}

function sampleName(depth: string): string {
  const names: Record<string, string> = { char: '8-bit signed integer', short: '16-bit signed integer', int: '32-bit signed integer' };
  return names[depth] ?? depth;
}
