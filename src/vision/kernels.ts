// The pipeline's per-pixel arithmetic compiled to WebAssembly (kernels/: the working-size planes
// with SIMD, the full-size composition), built into dist/ by `npm run build:kernels`, which `npm run
// build` and `npm test` run first. Each thread that calls these gets its own instance on first use;
// its memory grows to the largest job seen and is kept for the thread's life: 17 working-size
// planes (~28 MB at 640²) for the guided filter, the fields plus chunks of 4 MB of rows to compose,
// the model's input (3 MB) and the photo it is stretched from, and a chunk's PNG scanlines with their
// deflate tokens and output. The main thread's instance resamples the model's mask and unpacks the
// guide (under 7 MB at 640²).
import fs from 'node:fs';
import type { AxisSamples } from './planes.ts';

/** The same file from src/vision (tests, benches) and from dist/vision (built). */
const wasmFile = new URL('../../dist/vision-kernels.wasm', import.meta.url);

export interface KernelExports {
  memory: WebAssembly.Memory;
  boxMean(plane: number, scratch: number, column: number, inverseCols: number, width: number, height: number, radius: number): void;
  guidedMatte(base: number, width: number, height: number, radius: number, epsilon: number, curve: number, curveLast: number): void;
  colourFields(base: number, width: number, height: number, wideRadius: number, narrowRadius: number): void;
  unpackRgb(rgb: number, count: number, table: number, out: number): void;
  resamplePlane(source: number, sourceWidth: number, out: number, width: number, height: number, xLo: number, xHi: number, xT: number, yLo: number, yHi: number, yT: number): void;
  settleCells(coefficients: number, cw: number, ch: number, curve: number, curveLast: number, settled: number): void;
  composeWorkSize(width: number, cw: number): number;
  composeRows(
    pixels: number, out: number, channels: number, width: number, height: number, first: number, rows: number,
    alphaBytes: number, coefficients: number, cw: number, ch: number, cellsFrom: number, cellsHeld: number, curve: number, curveLast: number, settled: number,
    colours: number, fw: number, fh: number, coloursFrom: number, coloursHeld: number, work: number,
  ): void;
  stretchRgb(source: number, width: number, height: number, out: number, outWidth: number, outHeight: number, outStride: number, work: number): void;
  filterUp(pixels: number, rows: number, rowBytes: number, previous: number, out: number): void;
  adler32(data: number, length: number, adler: number): number;
  deflateScan(data: number, length: number, counts: number, tokens: number): number;
  deflateSample(data: number, length: number, stride: number, bytes: number, counts: number, tokens: number): void;
  deflateEmit(tokens: number, tokenCount: number, table: number, near: number, pixel: number, state: number): void;
  deflateFused(data: number, length: number, table: number, near: number, pixel: number, matches: number, state: number): void;
}

let loaded: KernelExports | undefined;

function kernels(): KernelExports {
  if (loaded) return loaded;
  if (!fs.existsSync(wasmFile)) throw new Error(`${wasmFile.pathname} is missing: run \`npm run build:kernels\``);
  const exports = new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(wasmFile))).exports as Partial<KernelExports>;
  const functions = ['boxMean', 'guidedMatte', 'colourFields', 'resamplePlane', 'unpackRgb', 'settleCells', 'composeWorkSize', 'composeRows', 'stretchRgb', 'filterUp', 'adler32', 'deflateScan', 'deflateSample', 'deflateEmit', 'deflateFused'] as const;
  // The callers lay their data out from offset 0, so the module must hold none of its own there.
  if (!(exports.memory instanceof WebAssembly.Memory) || exports.memory.buffer.byteLength !== 0 || functions.some((name) => typeof exports[name] !== 'function')) {
    throw new Error(`${wasmFile.pathname} does not export the vision kernels as expected: rebuild it with \`npm run build:kernels\``);
  }
  loaded = exports as KernelExports;
  return loaded;
}

/**
 * This thread's kernels with their memory grown to at least `bytes`, laid out by the caller from
 * offset 0. Views made on `memory` hold until the next call (growing replaces the buffer).
 */
export function kernelsWith(bytes: number): { kernels: KernelExports; memory: ArrayBuffer } {
  const k = kernels();
  return { kernels: k, memory: memoryOf(k, bytes) };
}

/** `bytes` rounded up to a multiple of 16, so that what the callers lay out next starts aligned for SIMD loads. */
export function align16(bytes: number): number {
  return Math.ceil(bytes / 16) * 16;
}

function memoryOf(k: KernelExports, bytes: number): ArrayBuffer {
  const missing = bytes - k.memory.buffer.byteLength;
  if (missing > 0) k.memory.grow(Math.ceil(missing / 65_536));
  return k.memory.buffer;
}

/** Mean over the (2r+1)² window around each pixel, the window clipped at the borders (no padding bias), written over `plane`. */
export function boxMeanInPlace(plane: Float32Array, width: number, height: number, radius: number): void {
  const k = kernels();
  const bytes = plane.length * 4;
  const memory = memoryOf(k, 2 * bytes + 16 * width);
  new Float32Array(memory, 0, plane.length).set(plane);
  k.boxMean(0, bytes, 2 * bytes, 2 * bytes + 8 * width, width, height, radius);
  plane.set(new Float32Array(memory, 0, plane.length));
}

/**
 * Rows of width-wide planes a kernel solves: it reads input rows [top, bottom) and writes output
 * rows [from, to), which lie within them (a band of rows with the margin its windows reach).
 */
export interface RowSpan {
  top: number;
  bottom: number;
  from: number;
  to: number;
}

/** Every row of a plane `height` rows tall. */
export function allRows(height: number): RowSpan {
  return { top: 0, bottom: height, from: 0, to: height };
}

/** Copies input rows [top, bottom) of each plane into the kernels' memory from byte 0, one plane after another. */
function rowsIn(memory: ArrayBuffer, planes: Float32Array[], width: number, { top, bottom }: RowSpan): number {
  const n = width * (bottom - top);
  planes.forEach((plane, i) => new Float32Array(memory, i * n * 4, n).set(plane.subarray(top * width, bottom * width)));
  return n;
}

/** Copies rows [from, to) of the solved planes (`n` values each, from plane `first` on) to the outputs' same rows. */
function rowsOut(memory: ArrayBuffer, outputs: Float32Array[], first: number, n: number, width: number, { top, from, to }: RowSpan): void {
  const count = width * (to - from);
  outputs.forEach((plane, i) => plane.set(new Float32Array(memory, ((first + i) * n + (from - top) * width) * 4, count), from * width));
}

function checkPlanes(what: string, planes: Float32Array[], count: number, size: number): void {
  if (planes.length !== count || planes.some((p) => p.length !== size)) throw new Error(`${what} takes ${count} planes of width × height`);
}

/**
 * The colour guided filter and its alpha at the working size over `rows` of width × height planes:
 * `inputs` the guide's r, g and b and the mask, `outputs` a_r, a_g, a_b, b (already averaged over
 * the window) and the alpha through `curve`.
 */
export function guidedMatteRows(inputs: Float32Array[], outputs: Float32Array[], width: number, height: number, rows: RowSpan, radius: number, epsilon: number, curve: Uint8Array): void {
  checkPlanes('the guided filter', inputs, 4, width * height);
  checkPlanes('the guided filter', outputs, 5, width * height);
  const k = kernels();
  const solved = rows.bottom - rows.top;
  const curveAt = 17 * width * solved * 4 + 16 * width;
  const memory = memoryOf(k, curveAt + curve.length);
  const n = rowsIn(memory, inputs, width, rows);
  new Uint8Array(memory, curveAt, curve.length).set(curve);
  k.guidedMatte(0, width, solved, radius, epsilon, curveAt, curve.length - 1);
  rowsOut(memory, outputs, 0, n, width, rows);
}

/**
 * Blur-fusion colour fields over `rows` of width × height planes: `inputs` the photo's r, g and b
 * and the alpha, `outputs` the smooth foreground's r, g, b and the smooth background's r, g, b.
 */
export function colourFieldsRows(inputs: Float32Array[], outputs: Float32Array[], width: number, height: number, rows: RowSpan, wideRadius: number, narrowRadius: number): void {
  checkPlanes('the colour fields', inputs, 4, width * height);
  checkPlanes('the colour fields', outputs, 6, width * height);
  const k = kernels();
  const memory = memoryOf(k, 12 * width * (rows.bottom - rows.top) * 4 + 16 * width);
  const n = rowsIn(memory, inputs, width, rows);
  k.colourFields(0, width, rows.bottom - rows.top, wideRadius, narrowRadius);
  rowsOut(memory, outputs, 5, n, width, rows);
}

/** Interleaved RGB bytes as three planes of floats (`out`, new ones by default), each byte b as `table[b]`. */
export function unpackRgbWith(rgb: Uint8Array, table: Float32Array, out?: Float32Array[]): Float32Array[] {
  if (rgb.length % 3 !== 0 || table.length !== 256) throw new Error('unpackRgb takes RGB bytes and a table of 256 values');
  if (out && (out.length !== 3 || out.some((p) => p.length !== rgb.length / 3))) throw new Error('unpackRgb writes three planes of one value per pixel');
  const k = kernels();
  const count = rgb.length / 3;
  const tableAt = align16(rgb.length);
  const outAt = tableAt + 1024;
  const memory = memoryOf(k, outAt + 12 * count);
  new Uint8Array(memory, 0, rgb.length).set(rgb);
  new Float32Array(memory, tableAt, 256).set(table);
  k.unpackRgb(0, count, tableAt, outAt);
  const planes = out ?? [0, 1, 2].map(() => new Float32Array(count));
  planes.forEach((plane, c) => plane.set(new Float32Array(memory, outAt + c * 4 * count, count)));
  return planes;
}

/**
 * `source` (`sourceWidth` wide) resampled bilinearly to width × height at the columns and rows `xs`
 * and `ys` sample (planes.ts), into `out` (a new plane by default).
 */
export function resamplePlaneWith(source: Float32Array, sourceWidth: number, width: number, height: number, xs: AxisSamples, ys: AxisSamples, out: Float32Array = new Float32Array(width * height)): Float32Array {
  if (out.length !== width * height) throw new Error('the resampled plane is width × height');
  const k = kernels();
  const outAt = align16(source.length * 4);
  const xAt = outAt + align16(width * height * 4);
  const yAt = xAt + 3 * align16(width * 4);
  const memory = memoryOf(k, yAt + 3 * align16(height * 4));
  new Float32Array(memory, 0, source.length).set(source);
  const tables = (at: number, samples: AxisSamples, count: number): number[] => {
    const step = align16(count * 4);
    new Int32Array(memory, at, count).set(samples.lo);
    new Int32Array(memory, at + step, count).set(samples.hi);
    new Float32Array(memory, at + 2 * step, count).set(samples.t);
    return [at, at + step, at + 2 * step];
  };
  const [xLo, xHi, xT] = tables(xAt, xs, width);
  const [yLo, yHi, yT] = tables(yAt, ys, height);
  k.resamplePlane(0, sourceWidth, outAt, width, height, xLo!, xHi!, xT!, yLo!, yHi!, yT!);
  out.set(new Float32Array(memory, outAt, width * height));
  return out;
}

/** Interleaved RGB bytes to stretch bilinearly into a rectangle of an RGB canvas. */
export interface StretchJob {
  /** width × height interleaved RGB. */
  source: Uint8Array;
  width: number;
  height: number;
  /** canvasWidth × canvasHeight interleaved RGB; the rectangle is overwritten, the rest kept. */
  canvas: Uint8Array;
  canvasWidth: number;
  left: number;
  top: number;
  /** The rectangle's size, each no smaller than the source's. */
  outWidth: number;
  outHeight: number;
}

/** Writes the source, stretched, into the job's canvas. */
export function stretchRgbInto({ source, width, height, canvas, canvasWidth, left, top, outWidth, outHeight }: StretchJob): void {
  if (source.length !== width * height * 3) throw new Error(`expected ${width * height * 3} RGB bytes, got ${source.length}`);
  if (outWidth < width || outHeight < height) throw new Error('the stretch only enlarges');
  const canvasHeight = canvas.length / (canvasWidth * 3);
  if (!Number.isInteger(canvasHeight) || left < 0 || top < 0 || left + outWidth > canvasWidth || top + outHeight > canvasHeight) {
    throw new Error('the rectangle does not fit in the canvas');
  }
  const k = kernels();
  const canvasAt = align16(source.length);
  const workAt = canvasAt + align16(canvas.length);
  const memory = memoryOf(k, workAt + 8 * outWidth + 12 * width + 128);
  new Uint8Array(memory, 0, source.length).set(source);
  const inMemory = new Uint8Array(memory, canvasAt, canvas.length);
  inMemory.set(canvas);
  k.stretchRgb(0, width, height, canvasAt + (top * canvasWidth + left) * 3, outWidth, outHeight, canvasWidth * 3, workAt);
  canvas.set(inMemory);
}
