// From decoded pixels to the cutout's alpha and colour fields: model passes → average at the
// working resolution → guided refinement applied at full size → foreground colour fields.
import sharp from 'sharp';
import type { DecodedImage } from './decode.ts';
import { colourFields, type ColourFields } from './foreground.ts';
import { applyAtFullSize, applyAtWorkingSize, guidedCoefficients, type GuidePlanes } from './guided-filter.ts';
import { modelSize, type Segmenter } from './model.ts';
import { resample } from './planes.ts';
import { mirrorRows, toModelInput, type Geometry, type ModelInput } from './preprocess.ts';
import { alphaCurve, workingSide, type Recipe } from './recipe.ts';

export type MatteStage = 'preprocess' | 'inference' | 'refine' | 'foreground';
export type StageRunner = <T>(name: MatteStage, work: () => Promise<T>) => Promise<T>;

export interface Matte {
  /** Full-size alpha, one byte per pixel (the source's own alpha not yet applied). */
  alpha: Uint8Array;
  /** Smooth foreground/background colours for decontamination, or null when the recipe skips it. */
  colours: ColourFields | null;
}

const untimed: StageRunner = (_name, work) => work();

export async function computeMatte(segmenter: Segmenter, image: DecodedImage, recipe: Recipe, stage: StageRunner = untimed): Promise<Matte> {
  const scale = Math.min(1, workingSide / Math.max(image.width, image.height));
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const { inputs, guide } = await stage('preprocess', async () => {
    const geometries = [...new Set(recipe.passes.map((pass) => pass.geometry))];
    const made = await Promise.all(geometries.map((geometry) => toModelInput(image, geometry)));
    return { inputs: new Map<Geometry, ModelInput>(geometries.map((g, i) => [g, made[i]!])), guide: await guidePlanes(image, width, height) };
  });
  const mask = await stage('inference', async () => {
    const sum = new Float32Array(width * height);
    for (const pass of recipe.passes) {
      const input = inputs.get(pass.geometry)!;
      const predicted = pass.mirrored
        ? mirrorRows(await segmenter.predict(mirrorRows(input.tensor, modelSize)), modelSize)
        : await segmenter.predict(input.tensor);
      const mapped = resample({ data: predicted, width: modelSize, height: modelSize }, input.content, width, height);
      for (let i = 0; i < sum.length; i++) sum[i]! += mapped[i]! / recipe.passes.length;
    }
    return sum;
  });
  const { alpha, workingAlpha } = await stage('refine', async () => {
    const curve = alphaCurve(recipe.contrast);
    if (!recipe.refine) return plainUpsampling(mask, width, height, image, curve);
    const radius = Math.max(1, Math.round(recipe.refine.radius * Math.max(width, height)));
    const coefficients = guidedCoefficients(guide, mask, width, height, radius, recipe.refine.epsilon);
    const working = applyAtWorkingSize(coefficients, guide);
    for (let i = 0; i < working.length; i++) working[i] = curve[Math.round(working[i]! * 1024)]! / 255;
    return { alpha: applyAtFullSize(coefficients, image.pixels, image.channels, image.width, image.height, curve), workingAlpha: working };
  });
  const colours = recipe.decontaminate
    ? await stage('foreground', async () => {
        const long = Math.max(width, height);
        return colourFields(guide, workingAlpha, width, height, Math.max(1, Math.round(long * 0.06)), Math.max(1, Math.round(long * 0.006)));
      })
    : null;
  return { alpha, colours };
}

/** Without refinement: the mask through the curve, bilinearly resized to full size by sharp. */
async function plainUpsampling(mask: Float32Array, width: number, height: number, image: DecodedImage, curve: Uint8Array) {
  const working = new Float32Array(mask.length);
  const bytes = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) {
    bytes[i] = curve[Math.round(Math.min(1, Math.max(0, mask[i]!)) * 1024)]!;
    working[i] = bytes[i]! / 255;
  }
  const alpha = await sharp(bytes, { raw: { width, height, channels: 1 } })
    .resize(image.width, image.height, { fit: 'fill', kernel: 'linear' })
    .extractChannel(0)
    .raw()
    .toBuffer();
  return { alpha: new Uint8Array(alpha.buffer, alpha.byteOffset, alpha.length), workingAlpha: working };
}

/** The photo at the working size as colour planes in [0, 1], a transparent source seen over grey as the model sees it. */
async function guidePlanes(image: DecodedImage, width: number, height: number): Promise<GuidePlanes> {
  const rgb = await sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: image.channels } })
    .flatten({ background: { r: 128, g: 128, b: 128 } })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  const planes: GuidePlanes = [new Float32Array(width * height), new Float32Array(width * height), new Float32Array(width * height)];
  for (let i = 0, p = 0; i < width * height; i++, p += 3) {
    planes[0][i] = rgb[p]! / 255;
    planes[1][i] = rgb[p + 1]! / 255;
    planes[2][i] = rgb[p + 2]! / 255;
  }
  return planes;
}
