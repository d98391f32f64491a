// Runs the baseline and our pipeline on one decoded image, sharing model passes between recipes.
import crypto from 'node:crypto';
import sharp from 'sharp';
import { composeCutout } from '../src/vision/cutout-bands.ts';
import { readHeader, type DecodedImage } from '../src/vision/decode.ts';
import { computeMatte } from '../src/vision/matte.ts';
import { modelSize, type Segmenter } from '../src/vision/model.ts';
import { decodedPhoto, openPhoto } from '../src/vision/photo.ts';
import { toModelInput } from '../src/vision/preprocess.ts';
import type { Recipe } from '../src/vision/recipe.ts';
import { sharedPlanes } from '../src/vision/shared-planes.ts';
import { resizeAsPeer, truncatedMaskBytes } from './peer-sampling.ts';

/**
 * The model is deterministic, so a pass on the same input tensor is run once and its mask reused by
 * every recipe that asks for it (the subjects differ only after inference).
 */
export function cachingSegmenter(segmenter: Segmenter): Segmenter & { passes: number; clear(): void } {
  const cache = new Map<string, Promise<Float32Array>>();
  const wrapper = {
    passes: 0,
    predict(input: Uint8Array, side?: number): Promise<Float32Array> {
      const key = `${side ?? modelSize}:${crypto.createHash('sha1').update(input).digest('hex')}`;
      let mask = cache.get(key);
      if (!mask) {
        wrapper.passes++;
        cache.set(key, (mask = segmenter.predict(input, side)));
      }
      return mask;
    },
    clear: () => cache.clear(),
  };
  return wrapper;
}

/**
 * How the baseline resamples the model's input and mask. `peer`: as the peer does (peer-sampling.ts),
 * the baseline; `centred`: the same pass resampled at pixel centres (our input kernel and
 * sharp's bilinear), which scores above the peer's own output on the fixtures: the guards in the
 * tests hold our recipes to this stronger one.
 */
export type BaselineSampling = 'peer' | 'centred';

/** What the peer does: the raw mask of the stretched 1024² input, bilinearly resized to full size; the photo's colours kept. */
export async function baselineCutout(segmenter: Segmenter, image: DecodedImage, sampling: BaselineSampling = 'peer'): Promise<Uint8Array> {
  const { width, height, channels, pixels } = image;
  const alpha = sampling === 'peer' ? await peerAlpha(segmenter, image) : await centredAlpha(segmenter, image);
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < alpha.length; i++) {
    for (let c = 0; c < 3; c++) rgba[i * 4 + c] = pixels[i * channels + c]!;
    rgba[i * 4 + 3] = channels === 4 ? Math.round((alpha[i]! * pixels[i * 4 + 3]!) / 255) : alpha[i]!;
  }
  return rgba;
}

async function peerAlpha(segmenter: Segmenter, image: DecodedImage): Promise<Uint8Array> {
  const { width, height, channels, pixels } = image;
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) for (let c = 0; c < 3; c++) rgb[i * 3 + c] = pixels[i * channels + c]!;
  const mask = await segmenter.predict(resizeAsPeer(rgb, width, height, 3, modelSize, modelSize));
  return resizeAsPeer(truncatedMaskBytes(mask), modelSize, modelSize, 1, width, height);
}

async function centredAlpha(segmenter: Segmenter, image: DecodedImage): Promise<Uint8Array> {
  const { rgb } = await toModelInput(image, 'stretch');
  const mask = await segmenter.predict(rgb);
  const bytes = new Uint8ClampedArray(mask.length);
  for (let i = 0; i < mask.length; i++) bytes[i] = mask[i]! * 255;
  const alpha = await sharp(bytes, { raw: { width: modelSize, height: modelSize, channels: 1 } })
    .resize(image.width, image.height, { fit: 'fill', kernel: 'linear' })
    .extractChannel(0)
    .raw()
    .toBuffer();
  return new Uint8Array(alpha.buffer, alpha.byteOffset, alpha.length);
}

/** The pixel cap the bench decodes and opens its photos under: its enlarged photos are within it. */
export const openedPixels = 100_000_000;

/**
 * Our cutout of `image`. Given the bytes it was decoded from, the photo is opened from them as the
 * service opens it (openPhoto): a large photo's copies are then made from its encoded bytes.
 */
export async function ourCutout(segmenter: Segmenter, image: DecodedImage, recipe: Recipe, encoded?: Buffer): Promise<Uint8Array> {
  // The working planes are given back for the next image, as removeBackground gives them back.
  const planes = sharedPlanes();
  const photo = encoded ? await openPhoto(encoded, await readHeader(encoded, openedPixels), openedPixels, planes) : decodedPhoto(image);
  const matte = await computeMatte(segmenter, photo, recipe, undefined, planes);
  // A copy: the cutout is composed into the set's memory, which the next image reuses.
  const cutout = new Uint8Array(await composeCutout(await photo.decoded, matte, planes));
  planes.release();
  return cutout;
}
