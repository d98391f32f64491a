// The background-removal pipeline: decode → preprocess → inference → refine → foreground → compose → encode.
import { TaskError } from '../domain/errors.ts';
import type { OutputFormat, Precision, Subject } from '../domain/removal-request.ts';
import { composeCutout, compressBands } from './cutout-bands.ts';
import { readHeader } from './decode.ts';
import { assertEncodable, encodeWebp } from './encode.ts';
import { computeMatte } from './matte.ts';
import type { Segmenter } from './model.ts';
import { openPhoto } from './photo.ts';
import { assemblePng } from './png-file.ts';
import { recipeFor, type Recipe } from './recipe.ts';
import { sharedPlanes } from './shared-planes.ts';

export { loadSegmenter, type Segmenter, type SegmenterOptions } from './model.ts';

export interface RemovalOptions {
  /** Tunes the refinement (see recipe.ts). */
  subject: Subject;
  /** `high` runs two model passes and averages them (see recipe.ts). */
  precision: Precision;
  format: OutputFormat;
  /** Decoded-pixel cap (width × height), checked from the header before decoding. */
  maxPixels: number;
  /** For benchmarks: replaces the recipe that subject and precision choose. */
  recipe?: Recipe;
}

/**
 * `decode`: the header read and checked, and the photo decoded, except for a large photo, whose
 * decode runs beside the making of its guide (photo.ts) and so falls in `preprocess`;
 * `refine`: the guided filter solved at the working size; `foreground`: colour-decontamination
 * fields; `compose`: both applied at full size, in parallel bands, and the RGBA assembled — for a
 * PNG also filtered and deflated there, band by band; `encode`: for a PNG only the file put together
 * from the bands' compressed rows (png-file.ts), for WebP sharp's encoding of the RGBA.
 */
export type Stage = 'decode' | 'preprocess' | 'inference' | 'refine' | 'foreground' | 'compose' | 'encode';

export interface RemovalResult {
  data: Buffer;
  /** The source's upright size. */
  width: number;
  height: number;
  format: OutputFormat;
  /** Milliseconds spent in each stage. */
  timings: Record<Stage, number>;
}

/**
 * Cuts the subject out of an encoded image. Throws TaskError: `unsupported_image` and
 * `image_too_large` for the input's faults, `processing_failed` for anything else.
 */
export async function removeBackground(segmenter: Segmenter, input: Buffer, options: RemovalOptions): Promise<RemovalResult> {
  const timings = {} as Record<Stage, number>;
  async function stage<T>(name: Stage, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } catch (err) {
      if (err instanceof TaskError) throw err;
      // Internal details (paths, library messages) stay in `cause` for the logs, out of the task's error.
      const failure = new TaskError('processing_failed', `Background removal failed during ${name}.`);
      failure.cause = err;
      throw failure;
    } finally {
      timings[name] = Math.round((performance.now() - started) * 10) / 10;
    }
  }

  const planes = sharedPlanes();
  const photo = await stage('decode', async () => {
    const header = await readHeader(input, options.maxPixels);
    assertEncodable(header.width, header.height, options.format);
    return openPhoto(input, header, options.maxPixels, planes);
  });
  const matte = await computeMatte(segmenter, photo, options.recipe ?? recipeFor(options.subject, options.precision, photo.width, photo.height), stage, planes);
  const image = await photo.decoded;
  let data: Buffer;
  if (options.format === 'png') {
    const bands = await stage('compose', () => compressBands(image, matte, planes));
    data = await stage('encode', async () => assemblePng(image.width, image.height, bands));
  } else {
    const rgba = await stage('compose', () => composeCutout(image, matte, planes));
    data = await stage('encode', () => encodeWebp(rgba, image.width, image.height));
  }
  // Only once every band is done: after a failure a thread may still be writing to the planes, and
  // the set is left to the garbage collector instead.
  planes.release();
  return { data, width: image.width, height: image.height, format: options.format, timings };
}
