// Turns untrusted bytes into upright 8-bit sRGB pixels, refusing what we do not handle before
// any pixel is decoded.
import sharp, { type Metadata, type Sharp } from 'sharp';
import { TaskError } from '../domain/errors.ts';
import { widePrimariesOf, withPrimariesProfile, type WidePrimaries } from './avif-colour.ts';
import { largestDeclaredSize } from './heif-canvas.ts';
import { jpegScans, maxJpegScans } from './jpeg-scans.ts';
import { assertColourAndAlpha, deepSamples, eightBit, type DeepSamples } from './sample-formats.ts';

// libvips' operation cache keeps up to 50 MB of recent results for reuse; every image here is new
// and passes through once, so the cache only adds to the worker's resident memory.
sharp.cache(false);

/**
 * Threads libvips gives each image. sharp sets 1 on glibc unless MALLOC_ARENA_MAX is set, which
 * our processes set (allocator-env.ts), so that it was left at the number of cores: a JPEG decodes
 * in one thread whatever the setting, and the second only hands its strips back and forth. With 1,
 * `npm run bench:turns` on its 2 MP photo: the decode 2.2–2.5 ms shorter, the work around inference
 * 3–6% (Performance, "Measured on Zen 5 … at stop 55"). The photo's copies still run side by side,
 * each in a thread of libuv's pool.
 */
const libvipsThreads = 1;
sharp.concurrency(libvipsThreads);

/** Decoders we accept, as sharp names them (AVIF reports as `heif`). Anything else, SVG included, is refused. */
const acceptedFormats: ReadonlySet<string> = new Set(['jpeg', 'png', 'webp', 'gif', 'heif', 'tiff']);

/**
 * The longest side taken, the largest a JPEG or a GIF can have. Within the pixel cap, a strip far
 * longer than that (10,000,000×5) grew the process by about 3.8 GB in its resizes and the one band
 * it composes into (throwaway script; a square 50 MP image about 0.4 GB, a 1000:1 strip 0.7 GB).
 */
export const maxSide = 65_535;

export interface ImageHeader {
  format: string;
  /** Upright size, after EXIF orientation. */
  width: number;
  height: number;
  /** Set when the samples are 32-bit integers or floats, which decodableBytes rewrites first. */
  deepSamples?: DeepSamples;
  /**
   * Set for 16-bit RGB samples with an ICC profile. sharp converts such a source through its
   * profile to Display P3, not sRGB (to keep its gamut), and the cast to 8-bit sRGB then only
   * narrows the samples: P3 values read as sRGB, duller colours. So it is converted to sRGB from
   * the start (inSourceColours). Only such a source: a CMYK one without a profile would trade
   * sharp's CMYK profile for a plainer conversion.
   */
  sixteenBitProfile?: boolean;
  /**
   * Set for an AVIF with no ICC profile whose nclx colour box names Display P3 or BT.2020
   * primaries, which libvips would take as sRGB's: decodableBytes rewrites it with a profile for them.
   */
  widePrimaries?: WidePrimaries;
}

/** What the decode takes from the header: how the source's colours are converted. */
export type SourceColours = Pick<ImageHeader, 'sixteenBitProfile'>;

/** Interleaved 8-bit sRGB pixels, with the source's alpha as a fourth channel when it has one */
export interface DecodedImage {
  pixels: Buffer;
  width: number;
  height: number;
  channels: 3 | 4;
}

/** Reads only the header: format and size are checked without decoding pixels. */
export async function readHeader(input: Buffer, maxPixels: number): Promise<ImageHeader> {
  let metadata: Metadata;
  try {
    // The pixel limit is ours to apply below, with a clearer error than sharp's.
    metadata = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    throw new TaskError('unsupported_image', 'The data is not a recognisable image.');
  }
  if (!acceptedFormats.has(metadata.format)) {
    throw new TaskError('unsupported_image', `${metadata.format.toUpperCase()} images are not supported; send JPEG, PNG, WebP, GIF, AVIF or TIFF.`);
  }
  // sharp's prebuilt libvips decodes HEIF coded with AV1 (AVIF) but not with HEVC (the HEIC of
  // phones): its decoder is left out for patent reasons, so such a file would only fail to decode.
  if (metadata.format === 'heif' && metadata.compression === 'hevc') {
    throw new TaskError('unsupported_image', 'HEIC images (HEIF coded with HEVC) are not supported; send JPEG, PNG, WebP, GIF, AVIF or TIFF.');
  }
  if (metadata.isProgressive === true && metadata.format === 'jpeg' && jpegScans(input, maxJpegScans) > maxJpegScans) {
    throw new TaskError('unsupported_image', `Progressive JPEGs of more than ${maxJpegScans} scans are not supported (each scan is another pass over the whole image; encoders write about 10); save it again as a JPEG.`);
  }
  assertColourAndAlpha(metadata);
  const { width, height } = metadata.autoOrient;
  if (!(width > 0 && height > 0)) throw new TaskError('unsupported_image', 'The image has no pixels.');
  assertWithinCaps(width, height, maxPixels);
  // A HEIF is decoded at sizes its header does not give: a grid's, an overlay's, an image's before cropping (heif-canvas.ts).
  const decodedSize = metadata.format === 'heif' ? largestDeclaredSize(input) : undefined;
  if (decodedSize) assertWithinCaps(decodedSize.width, decodedSize.height, maxPixels);
  const sixteenBitProfile = metadata.space === 'rgb16' && metadata.hasProfile === true;
  return { format: metadata.format, width, height, deepSamples: deepSamples(metadata), sixteenBitProfile, widePrimaries: widePrimariesOf(input, metadata) };
}

/**
 * What decodeImage and resizeEncoded take: the input itself, or an 8-bit PNG (uncompressed: about
 * 150 MB for 50 MP of RGB) of the image its deep samples stand for, or of its samples with a
 * profile for the wide primaries its nclx box names.
 */
export async function decodableBytes(input: Buffer, header: ImageHeader, maxPixels: number): Promise<Buffer> {
  const { deepSamples: samples, widePrimaries } = header;
  if (samples) return decoding(maxPixels, () => eightBit(input, samples, maxPixels));
  if (widePrimaries) return decoding(maxPixels, () => withPrimariesProfile(input, widePrimaries, maxPixels));
  return input;
}

/** Decodes the first frame (animations and multi-page files contribute only that), upright. */
export async function decodeImage(input: Buffer, maxPixels: number, colours: SourceColours = {}): Promise<DecodedImage> {
  return decoding(maxPixels, async () => {
    const { data, info } = await uprightSrgb(input, maxPixels, (photo) => photo, colours).toBuffer({ resolveWithObject: true });
    if (info.channels !== 3 && info.channels !== 4) throw new Error(`decoded ${info.channels} channels`);
    return { pixels: data, width: info.width, height: info.height, channels: info.channels };
  });
}

/**
 * A smaller copy made by sharp straight from the encoded bytes as it decodes them: `shape` adds the
 * resizing to the upright photo, and the copy is 8-bit sRGB like decodeImage's pixels. Decoding
 * failures become the same errors as decodeImage's.
 */
export function resizeEncoded(input: Buffer, maxPixels: number, shape: (photo: Sharp) => Sharp, colours: SourceColours = {}): Promise<Buffer> {
  return decoding(maxPixels, () => uprightSrgb(input, maxPixels, shape, colours).toBuffer());
}

/** `photo` set to convert its source's colours to sRGB as its header asks (ImageHeader.sixteenBitProfile). */
export function inSourceColours(photo: Sharp, colours: SourceColours): Sharp {
  return colours.sixteenBitProfile ? photo.pipelineColourspace('srgb') : photo;
}

function uprightSrgb(input: Buffer, maxPixels: number, shape: (photo: Sharp) => Sharp, colours: SourceColours): Sharp {
  // CMYK, greyscale and 16-bit sources all become 8-bit sRGB; an ICC profile is applied on the way.
  return shape(inSourceColours(sharp(input, { limitInputPixels: Math.max(1, Math.floor(maxPixels)) }), colours).autoOrient())
    .toColourspace('srgb')
    .raw({ depth: 'uchar' });
}

async function decoding<T>(maxPixels: number, decode: () => Promise<T>): Promise<T> {
  try {
    return await decode();
  } catch (err) {
    if (err instanceof Error && /pixel limit/i.test(err.message)) {
      throw new TaskError('image_too_large', `The image has more than ${pixelCount(maxPixels)} pixels.`);
    }
    throw new TaskError('unsupported_image', 'The image data could not be decoded (corrupt or truncated file, or an unsupported variant of its format).');
  }
}

function assertWithinCaps(width: number, height: number, maxPixels: number): void {
  if (width * height > maxPixels) {
    throw new TaskError('image_too_large', `The image is ${width}×${height} (${pixelCount(width * height)} pixels); the limit is ${pixelCount(maxPixels)} pixels.`);
  }
  if (Math.max(width, height) > maxSide) {
    throw new TaskError('image_too_large', `The image is ${width}×${height}; a side can be at most ${pixelCount(maxSide)} pixels.`);
  }
}

// Whole pixels, grouped by thousands: rounded megapixels made 10001×5000 read as the 50 MP limit itself.
function pixelCount(pixels: number): string {
  return Math.floor(pixels).toLocaleString('en-US');
}
