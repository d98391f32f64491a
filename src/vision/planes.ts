// Float planes (one value per pixel, row-major) at the working resolution: box means and bilinear resampling.
import { boxMeanInPlace, resamplePlaneWith } from './kernels.ts';

export interface Plane {
  data: Float32Array;
  width: number;
  height: number;
}

/** Mean over the (2r+1)² window around each pixel, the window clipped at the borders (no padding bias). */
export function boxMean(src: Float32Array, width: number, height: number, radius: number): Float32Array {
  const result = src.slice();
  boxMeanInPlace(result, width, height, radius);
  return result;
}

/** For each destination index along one axis: the two source indices and the weight of the second (pixel centres aligned). */
export interface AxisSamples {
  lo: Int32Array;
  hi: Int32Array;
  t: Float32Array;
}

/** Where destination index `i` samples the source axis (pixel centres aligned, clamped to it): `scale` source pixels per destination pixel, from `start`. */
export function samplePosition(i: number, start: number, scale: number, sourceSize: number): number {
  return Math.min(Math.max(start + (i + 0.5) * scale - 0.5, 0), sourceSize - 1);
}

export function axisSamples(destination: number, start: number, span: number, sourceSize: number): AxisSamples {
  const lo = new Int32Array(destination);
  const hi = new Int32Array(destination);
  const t = new Float32Array(destination);
  const scale = span / destination;
  for (let i = 0; i < destination; i++) {
    const at = samplePosition(i, start, scale, sourceSize);
    const base = Math.floor(at);
    lo[i] = base;
    hi[i] = Math.min(base + 1, sourceSize - 1);
    t[i] = at - base;
  }
  return { lo, hi, t };
}

/** Bilinear resampling of the rectangle (left, top, w, h) of `src` to width × height (WebAssembly, kernels/planes.ts), into `out` (a new plane by default). */
export function resample(src: Plane, rect: { left: number; top: number; width: number; height: number }, width: number, height: number, out?: Float32Array): Float32Array {
  return resamplePlaneWith(src.data, src.width, width, height, axisSamples(width, rect.left, rect.width, src.width), axisSamples(height, rect.top, rect.height, src.height), out);
}
