// From decoded pixels to the cutout's alpha and colour fields: model passes → average at the
// working resolution → guided refinement solved there (applied at full size when the cutout is
// composed, cutout-bands.ts) → foreground colour fields.
import sharp from 'sharp';
import type { DecodedImage } from './decode.ts';
import { fieldsInThreads, guidedInThreads } from './cutout-bands.ts';
import { colourFields, type ColourFields } from './foreground.ts';
import { guidedMatte, type GuidedCoefficients, type GuidePlanes } from './guided-filter.ts';
import { unpackRgbWith } from './kernels.ts';
import { modelSize, type Segmenter } from './model.ts';
import { encodedCopiesFrom, type Photo } from './photo.ts';
import { resample } from './planes.ts';
import { contentRect, mirrorPixelRows, mirrorRows, photoModelInput, toModelInput, type ModelInput } from './preprocess.ts';
import { alphaCurve, type Recipe } from './recipe.ts';
import { sharedPlanes, type PlaneSet } from './shared-planes.ts';

export type MatteStage = 'preprocess' | 'inference' | 'refine' | 'foreground';
export type StageRunner = <T>(name: MatteStage, work: () => Promise<T>) => Promise<T>;

/**
 * The full-size alpha (the source's own alpha not yet applied): the guided filter's coefficients,
 * applied at full size band by band when the cutout is composed, or its bytes when not refined.
 */
export type FullSizeAlpha = { kind: 'guided'; coefficients: GuidedCoefficients; curve: Uint8Array } | { kind: 'bytes'; data: Uint8Array };

export interface Matte {
  alpha: FullSizeAlpha;
  /** Smooth foreground/background colours for decontamination, or null when the recipe skips it. */
  colours: ColourFields | null;
  /**
   * For each row of the working size, the share of its pixels that the alpha leaves visible: rows of
   * the subject cost the composition and the PNG's compression more than clear ones (cutout-bands.ts).
   */
  visibleRows?: Float32Array;
}

const untimed: StageRunner = (_name, work) => work();

/**
 * The photo's matte; by the time it is computed the photo is decoded (the preprocess waits for a
 * large photo's decode). Its working-size planes are taken from `planes`, shared with the band
 * threads: release the set once the cutout is composed, and not before.
 */
export async function computeMatte(segmenter: Segmenter, photo: Photo, recipe: Recipe, stage: StageRunner = untimed, planes: PlaneSet = sharedPlanes()): Promise<Matte> {
  const scale = Math.min(1, recipe.workingSide / Math.max(photo.width, photo.height));
  const width = Math.max(1, Math.round(photo.width * scale));
  const height = Math.max(1, Math.round(photo.height * scale));
  const { inputs, guide, image } = await stage('preprocess', async () => {
    const views = [...new Map(recipe.passes.filter((pass) => !pass.zoom).map((pass) => [viewKey(pass), pass])).values()];
    // sharp resizes in its own threads: the model's inputs and the guide are made side by side. A
    // large photo's first input is made beside its decode, and the guide from that input (photo.ts).
    const early = earlyView(photo, views[0], width, height);
    const earlyInput = early && photoModelInput(photo, early.geometry, early.side);
    const [guide, { image, made }] = await Promise.all([
      earlyInput ? earlyInput.then((input) => guideFromInput(input, width, height, planes)) : guidePlanes(photo, width, height, planes),
      photo.decoded.then(async (image) => ({
        image,
        made: await Promise.all(views.map((pass) => (pass === early ? earlyInput! : toModelInput(image, pass.geometry, undefined, pass.side)))),
      })),
    ]);
    return { inputs: new Map<string, ModelInput>(views.map((pass, i) => [viewKey(pass), made[i]!])), guide, image };
  });
  const mask = await stage('inference', async () => {
    // One pass is used as it is; several are combined as log-odds, so that where one pass is sure
    // and another unsure the sure one decides (averaged probabilities would leave the pixel half
    // transparent).
    const single = recipe.passes.length === 1;
    // Made when a pass is first added: a single pass has no need of them, and a task's large
    // buffers are what set its garbage collections going.
    let sum: Float32Array | null = null;
    let weight: Float32Array | null = null;
    for (const pass of recipe.passes) {
      let input = inputs.get(viewKey(pass));
      if (pass.zoom) {
        if (!sum || !weight) continue;
        const box = subjectBox(sum, weight, width, height, image.width, image.height);
        if (!box) continue;
        input = await toModelInput(image, pass.geometry, box, pass.side);
      }
      const side = input!.side;
      const predicted = pass.mirrored
        ? mirrorRows(await segmenter.predict(mirrorPixelRows(input!.rgb, side), side), side)
        : await segmenter.predict(input!.rgb, side);
      // Where the pass's region lies at the working size; the mask of what it saw is resampled onto it.
      const left = Math.round(input!.region.left / (image.width / width));
      const top = Math.round(input!.region.top / (image.height / height));
      const w = Math.max(1, Math.min(width - left, Math.round(input!.region.width / (image.width / width))));
      const h = Math.max(1, Math.min(height - top, Math.round(input!.region.height / (image.height / height))));
      const mapped = resample({ data: predicted, width: side, height: side }, input!.content, w, h, single ? planes.plane(w * h) : undefined);
      // One pass that covers the whole working image is the mask as it is (what adding it to nothing would give).
      if (single && left === 0 && top === 0 && w === width && h === height) return mapped;
      sum ??= planes.plane(width * height).fill(0);
      weight ??= new Float32Array(width * height);
      addPass(sum, weight, width, { data: mapped, left, top, width: w, height: h }, pass.weight ?? 1, !single);
    }
    if (!sum || !weight) return planes.plane(width * height).fill(0);
    combinePasses(sum, weight, !single);
    return sum;
  });
  const { alpha, workingAlpha } = await stage('refine', async () => {
    const curve = alphaCurve(recipe.contrast, recipe.centre);
    if (!recipe.refine) return plainUpsampling(mask, width, height, image, curve);
    const radius = Math.max(1, Math.round(recipe.refine.radius * Math.max(width, height)));
    const { coefficients, alpha } = await guidedMatte(guide, mask, width, height, { radius, epsilon: recipe.refine.epsilon, curve }, guidedInThreads, planes);
    return { alpha: { kind: 'guided', coefficients, curve } as FullSizeAlpha, workingAlpha: alpha };
  });
  const colours = recipe.decontaminate
    ? await stage('foreground', async () => {
        // The colour fields are wide blurs, so half the working size loses nothing and costs a quarter.
        const w = Math.max(1, Math.round(width / 2)), h = Math.max(1, Math.round(height / 2));
        const whole = { left: 0, top: 0, width, height };
        const half = (plane: Float32Array) => resample({ data: plane, width, height }, whole, w, h, planes.plane(w * h));
        const long = Math.max(w, h);
        return colourFields(
          [half(guide[0]), half(guide[1]), half(guide[2])],
          half(workingAlpha),
          w,
          h,
          Math.max(1, Math.round(long * 0.06)),
          Math.max(1, Math.round(long * 0.006)),
          fieldsInThreads,
          planes,
        );
      })
    : null;
  return { alpha, colours, visibleRows: visibleShares(workingAlpha, width, height) };
}

/**
 * The view of a large photo whose input is made by the photo's resizer: from its encoded bytes,
 * beside its decode, so that the decode is all the preprocess waits for (photo.ts). The guide is
 * then made from that input, instead of from a second reduced decode, and so for a large photo
 * opened from its pixels too: a lossless one gets the same matte either way. Only where the photo
 * shrinks into the model's square, as toModelInput then makes its input through sharp too, and the
 * input's content is no smaller than the working size on either axis, so that the guide is a
 * reduction of it. `npm run bench:turns` on its 12 MP photo: the preprocess 31 ms against 37.5–39
 * (Performance, "Measured on Zen 5 … at stop 53").
 */
function earlyView(photo: Photo, first: Recipe['passes'][number] | undefined, width: number, height: number): Recipe['passes'][number] | undefined {
  if (photo.width * photo.height < encodedCopiesFrom || !first) return undefined;
  const content = contentRect(photo.width, photo.height, first.geometry, first.side);
  const shrinks = content.width < photo.width || content.height < photo.height;
  return shrinks && content.width >= width && content.height >= height ? first : undefined;
}

/** Passes that see the same input (the mirrored view is made from the upright one's bytes). */
function viewKey(pass: Recipe['passes'][number]): string {
  return `${pass.geometry}:${pass.side ?? modelSize}`;
}

// The per-pixel loops of the passes' combination live in top-level functions rather than in the
// stage's closure, which is made anew for every task: their optimised code carries over from one
// task to the next, and the event loop waits less behind them (bench:api's event-loop maximum).

/** The share of each row's values above zero. */
function visibleShares(alpha: Float32Array, width: number, height: number): Float32Array {
  const shares = new Float32Array(height);
  for (let y = 0; y < height; y++) {
    let visible = 0;
    for (let x = 0, o = y * width; x < width; x++, o++) if (alpha[o]! > 0) visible++;
    shares[y] = visible / width;
  }
  return shares;
}

/** Adds one pass's mask (placed at left, top in the working image) with its weight, as log-odds or as it is. */
function addPass(sum: Float32Array, weight: Float32Array, width: number, pass: { data: Float32Array; left: number; top: number; width: number; height: number }, passWeight: number, asLogOdds: boolean): void {
  const { data, left, top, width: w, height: h } = pass;
  for (let y = 0; y < h; y++) {
    for (let x = 0, o = (top + y) * width + left, i = y * w; x < w; x++, o++, i++) {
      sum[o]! += passWeight * (asLogOdds ? logOdds(data[i]!) : data[i]!);
      weight[o]! += passWeight;
    }
  }
}

/** The weighted mean of the passes in place of their sum (back from log-odds to a probability where they were combined so); 0 where no pass reached. */
function combinePasses(sum: Float32Array, weight: Float32Array, fromLogOdds: boolean): void {
  for (let i = 0; i < sum.length; i++) {
    const mean = sum[i]! / weight[i]!;
    sum[i] = weight[i] === 0 ? 0 : fromLogOdds ? 1 / (1 + Math.exp(-mean)) : mean;
  }
}

/** Probabilities are clamped so that a pass sure of a pixel weighs a lot but not infinitely. */
function logOdds(p: number): number {
  const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(q / (1 - q));
}

/**
 * The bounding box (in image pixels) of what the passes so far (their weighted log-odds summed) call
 * foreground, with a margin of a tenth of its size, at least a quarter of the image's long side;
 * null when nothing is foreground.
 */
function subjectBox(sum: Float32Array, weight: Float32Array, width: number, height: number, imageWidth: number, imageHeight: number) {
  let x0 = width, y0 = height, x1 = -1, y1 = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0, o = y * width; x < width; x++, o++) {
      if (weight[o]! > 0 && sum[o]! >= 0) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  if (x1 < 0) return null;
  const side = Math.max(x1 - x0 + 1, y1 - y0 + 1);
  const margin = Math.max(Math.round(side / 10), Math.ceil((Math.max(width, height) / 4 - side) / 2), 2);
  const left = Math.max(0, x0 - margin), top = Math.max(0, y0 - margin);
  const right = Math.min(width, x1 + 1 + margin), bottom = Math.min(height, y1 + 1 + margin);
  const sx = imageWidth / width, sy = imageHeight / height;
  const boxLeft = Math.min(imageWidth - 1, Math.floor(left * sx)), boxTop = Math.min(imageHeight - 1, Math.floor(top * sy));
  return {
    left: boxLeft,
    top: boxTop,
    width: Math.max(1, Math.min(imageWidth - boxLeft, Math.ceil((right - left) * sx))),
    height: Math.max(1, Math.min(imageHeight - boxTop, Math.ceil((bottom - top) * sy))),
  };
}

/** Without refinement: the mask through the curve, bilinearly resized to full size by sharp. */
async function plainUpsampling(mask: Float32Array, width: number, height: number, image: DecodedImage, curve: Uint8Array): Promise<{ alpha: FullSizeAlpha; workingAlpha: Float32Array }> {
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
  return { alpha: { kind: 'bytes', data: alpha }, workingAlpha: working };
}

/** A byte's value in [0, 1], as a float: the guide's planes hold these. */
const unitLevels = Float32Array.from({ length: 256 }, (_, byte) => byte / 255);

/** The photo at the working size as colour planes in [0, 1], a transparent source seen over grey as the model sees it. */
async function guidePlanes(photo: Photo, width: number, height: number, planes: PlaneSet): Promise<GuidePlanes> {
  const rgb = await photo.resize((upright) => upright.flatten({ background: { r: 128, g: 128, b: 128 } }).resize(width, height, { fit: 'fill', kernel: 'linear' }));
  return unpackGuide(rgb, width, height, planes);
}

/** The guide resized from the part of a model input that holds the photo (earlyView): the model's input is already over grey. */
async function guideFromInput(input: ModelInput, width: number, height: number, planes: PlaneSet): Promise<GuidePlanes> {
  const rgb = await sharp(input.rgb, { raw: { width: input.side, height: input.side, channels: 3 } })
    .extract(input.content)
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  return unpackGuide(rgb, width, height, planes);
}

function unpackGuide(rgb: Uint8Array, width: number, height: number, planes: PlaneSet): GuidePlanes {
  return unpackRgbWith(rgb, unitLevels, [planes.plane(width * height), planes.plane(width * height), planes.plane(width * height)]) as GuidePlanes;
}
