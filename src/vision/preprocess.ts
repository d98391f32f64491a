// Builds the model's input: the image as interleaved RGB bytes of side² (modelSize² unless a pass
// asks for another side), either stretched to the square or scaled to fit it with grey padding. The
// INT8 graph takes those bytes as they are; for the fp32 graph the inference thread turns them into
// the normalised CHW float tensor (rgbToTensor) just before its run.
import sharp, { type Sharp } from 'sharp';
import { stretchInThread } from './cutout-bands.ts';
import type { DecodedImage } from './decode.ts';
import { modelSize } from './model.ts';
import type { Photo } from './photo.ts';

/** How the image is laid into the model's square. */
export type Geometry = 'stretch' | 'pad';

/** Where the image's content lies in the model's square. */
export interface ContentRect {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface ModelInput {
  /** side² pixels, interleaved RGB. */
  rgb: Uint8Array;
  side: number;
  content: ContentRect;
  /** The part of the image (in its pixels) that the model saw. */
  region: ContentRect;
}

/** Mid-grey: it normalises to zero input, the same as the model sees a transparent source. */
const grey = { r: 128, g: 128, b: 128 };

/**
 * The model's input for `region` of the image (all of it by default). An image no larger than its
 * place in the square on either axis is stretched by a kernel in a band thread (kernels/stretch.ts):
 * libvips enlarges through its general affine transform, the larger part of the 0.5 MP fixtures'
 * preprocessing before. An image that shrinks on either axis is resized and placed by sharp in one
 * step, antialiased, as before.
 */
export async function toModelInput(
  image: DecodedImage,
  geometry: Geometry,
  region: ContentRect = { left: 0, top: 0, width: image.width, height: image.height },
  side = modelSize,
): Promise<ModelInput> {
  const content = contentRect(region.width, region.height, geometry, side);
  const pipeline = () =>
    sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: image.channels } })
      .extract(region)
      // A transparent source is shown to the model over grey rather than with whatever colours
      // happen to be stored under its transparent pixels.
      .flatten({ background: grey });
  if (content.width < region.width || content.height < region.height) {
    const rgb = await intoSquare(pipeline(), content, side).raw().toBuffer();
    return { rgb, side, content, region };
  }
  const whole = region.left === 0 && region.top === 0 && region.width === image.width && region.height === image.height;
  // The kernel takes the pixels in a buffer of their own, which moves to its thread and back.
  const source = whole && image.channels === 3 ? new Uint8Array(image.pixels) : new Uint8Array(await pipeline().raw().toBuffer());
  const rgb = await stretchInThread({
    source,
    width: region.width,
    height: region.height,
    canvas: new Uint8Array(3 * side * side).fill(grey.r),
    canvasWidth: side,
    left: content.left,
    top: content.top,
    outWidth: content.width,
    outHeight: content.height,
  });
  return { rgb, side, content, region };
}

/**
 * The model's input for the whole of a photo that shrinks into the square, made by the photo's
 * resizer: a large photo's from its encoded bytes, without waiting for its decode (photo.ts). It
 * differs a little from toModelInput's where sharp has libjpeg decode a JPEG at a reduced scale for
 * it; `npm run bench:quality -- --upscale 5` scores the cutouts made so (README, How it works, step 2).
 */
export async function photoModelInput(photo: Pick<Photo, 'width' | 'height' | 'resize'>, geometry: Geometry, side = modelSize): Promise<ModelInput> {
  const content = contentRect(photo.width, photo.height, geometry, side);
  const rgb = await photo.resize((upright) => intoSquare(upright.flatten({ background: grey }), content, side));
  return { rgb, side, content, region: { left: 0, top: 0, width: photo.width, height: photo.height } };
}

/** The image resized into `content`, antialiased, and laid in the grey square around it. */
function intoSquare(image: Sharp, content: ContentRect, side: number): Sharp {
  return image.resize(content.width, content.height, { fit: 'fill', kernel: 'linear' }).extend({
    left: content.left,
    top: content.top,
    right: side - content.left - content.width,
    bottom: side - content.top - content.height,
    background: grey,
  });
}

export function contentRect(width: number, height: number, geometry: Geometry, side = modelSize): ContentRect {
  if (geometry === 'stretch') return { left: 0, top: 0, width: side, height: side };
  const scale = side / Math.max(width, height);
  const w = Math.max(1, Math.min(side, Math.round(width * scale)));
  const h = Math.max(1, Math.min(side, Math.round(height * scale)));
  return { left: Math.floor((side - w) / 2), top: Math.floor((side - h) / 2), width: w, height: h };
}

/** Interleaved RGB bytes → planar floats, (value − 128) / 256 as the model was trained, written into `tensor` (a new one by default). */
export function rgbToTensor(rgb: Uint8Array, tensor: Float32Array = new Float32Array(rgb.length)): Float32Array {
  const plane = rgb.length / 3;
  if (!Number.isInteger(plane)) throw new Error(`expected RGB bytes, got ${rgb.length}`);
  if (tensor.length !== plane * 3) throw new Error(`expected a tensor of ${plane * 3} values, got ${tensor.length}`);
  for (let i = 0, p = 0; i < plane; i++, p += 3) {
    tensor[i] = (rgb[p]! - 128) / 256;
    tensor[plane + i] = (rgb[p + 1]! - 128) / 256;
    tensor[2 * plane + i] = (rgb[p + 2]! - 128) / 256;
  }
  return tensor;
}

/** Mirrors every row of a `width`-wide interleaved RGB image (the mirrored view's input). */
export function mirrorPixelRows(rgb: Uint8Array, width: number): Uint8Array {
  const out = new Uint8Array(rgb.length);
  const rowBytes = width * 3;
  for (let row = 0; row < rgb.length; row += rowBytes) {
    for (let x = 0, last = row + rowBytes - 3; x < rowBytes; x += 3) {
      out[row + x] = rgb[last - x]!;
      out[row + x + 1] = rgb[last - x + 1]!;
      out[row + x + 2] = rgb[last - x + 2]!;
    }
  }
  return out;
}

/** Mirrors every row of `width` values (a mask back from the mirrored view). */
export function mirrorRows(data: Float32Array, width: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let row = 0; row < data.length; row += width) {
    for (let x = 0, last = row + width - 1; x < width; x++) out[row + x] = data[last - x]!;
  }
  return out;
}
