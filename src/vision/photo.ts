// The photo a task works on: its decoded pixels, and how sharp makes a smaller copy of it (the
// model's input, the refinement's guide). A small photo is decoded first and its copies resized from
// the pixels. A large one is decoded beside its copies, which sharp makes straight from the encoded
// bytes (it may let libjpeg decode at a reduced scale, the copies being much smaller): libjpeg
// decodes on one core and the copies' decode runs on the other, instead of after the whole decode
// (matte.ts makes the model's first input so, and the guide from that input). A large photo is
// decoded in a band thread, into the task's shared memory (shared-decode.ts).
import sharp, { type Sharp } from 'sharp';
import { decodeInThread } from './cutout-bands.ts';
import { decodableBytes, decodeImage, resizeEncoded, type DecodedImage, type ImageHeader } from './decode.ts';
import { modelSize } from './model.ts';
import { sharedPlanes, type PlaneSet } from './shared-planes.ts';

/** A smaller copy of the upright photo: `shape` adds sharp's resizing, the copy is interleaved 8-bit sRGB. */
export type Resizer = (shape: (photo: Sharp) => Sharp) => Promise<Buffer>;

export interface Photo {
  /** Upright size. */
  width: number;
  height: number;
  /** The decoded pixels, once decoded (a large photo's decode is under way beside its copies). */
  decoded: Promise<DecodedImage>;
  resize: Resizer;
}

/**
 * From this many pixels (four times the model's) the copies come from the encoded bytes. `npm run
 * bench`'s 12 MP photo gains from it. Its 2 MP one does not: the decode is too short for a second
 * decode beside it to gain anything, and it costs that decode's CPU (stop 53, `npm run bench:turns`
 * with this at 1.9 times the model's pixels against a checkout with it at 4: the 2 MP photo's decode
 * and preprocess 15.9 ms against 12.2).
 */
export const encodedCopiesFrom = 4 * modelSize * modelSize;

/** A photo already decoded: its copies are resized from its pixels. */
export function decodedPhoto(image: DecodedImage): Photo {
  return {
    width: image.width,
    height: image.height,
    decoded: Promise.resolve(image),
    resize: (shape) => shape(sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: image.channels } })).raw().toBuffer(),
  };
}

/**
 * Starts decoding `encoded`, whose header has been read and checked (readHeader); a large photo's
 * pixels are taken from `planes` where it has room (release the set only once they are no longer read).
 */
export async function openPhoto(encoded: Buffer, header: ImageHeader, maxPixels: number, planes: PlaneSet = sharedPlanes()): Promise<Photo> {
  const input = await decodableBytes(encoded, header, maxPixels);
  if (header.width * header.height < encodedCopiesFrom) return decodedPhoto(await decodeImage(input, maxPixels, header));
  // Without room in the set (a very large photo), decoded here into a buffer of its own.
  const into = planes.bytes(header.width * header.height * 4);
  const decoded = into ? decodeInThread({ input, maxPixels, colours: { sixteenBitProfile: header.sixteenBitProfile }, into }) : decodeImage(input, maxPixels, header);
  // Its failure is met by whoever awaits it, possibly after a copy fails first: not left unhandled meanwhile.
  decoded.catch(() => {});
  return { width: header.width, height: header.height, decoded, resize: (shape) => resizeEncoded(input, maxPixels, shape, header) };
}
