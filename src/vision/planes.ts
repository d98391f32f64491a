// Float planes (one value per pixel, row-major) at the working resolution: box means and bilinear resampling.

export interface Plane {
  data: Float32Array;
  width: number;
  height: number;
}

/** Mean over the (2r+1)² window around each pixel, the window clipped at the borders (no padding bias). */
export function boxMean(src: Float32Array, width: number, height: number, radius: number): Float32Array {
  const result = src.slice();
  boxMeanInPlace(result, width, height, radius, new Float32Array(src.length));
  return result;
}

/**
 * `boxMean` written over its own input, with `scratch` (at least as long) for the row sums: the band
 * threads take means this way so that a plane goes and comes back in one buffer, with nothing new
 * allocated per plane (every new buffer counts towards V8's next full collection).
 */
export function boxMeanInPlace(plane: Float32Array, width: number, height: number, radius: number, scratch: Float32Array): void {
  const rowSums = new Float64Array(width + 1);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) rowSums[x + 1] = rowSums[x]! + plane[row + x]!;
    for (let x = 0; x < width; x++) {
      const lo = Math.max(0, x - radius);
      const hi = Math.min(width, x + radius + 1);
      scratch[row + x] = rowSums[hi]! - rowSums[lo]!;
    }
  }
  // Vertical pass as a running window over whole rows, so memory is read row by row. The plane's own
  // values were all summed into `scratch` above, so it can take the result.
  const column = new Float64Array(width);
  let top = 0;
  let bottom = 0; // rows [top, bottom) are in `column`
  for (let y = 0; y < height; y++) {
    const lo = Math.max(0, y - radius);
    const hi = Math.min(height, y + radius + 1);
    for (; bottom < hi; bottom++) for (let x = 0, r = bottom * width; x < width; x++) column[x]! += scratch[r + x]!;
    for (; top < lo; top++) for (let x = 0, r = top * width; x < width; x++) column[x]! -= scratch[r + x]!;
    const rows = hi - lo;
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const cols = Math.min(width, x + radius + 1) - Math.max(0, x - radius);
      plane[row + x] = column[x]! / (rows * cols);
    }
  }
}

/**
 * Box means of several planes of one size with one radius. The pipeline's provider computes them
 * in the band threads, in parallel and off the event loop (cutout-bands.ts), and takes the planes
 * over to do so: they are detached when it returns, so callers pass copies of planes they still
 * need. This one, on the calling thread, is the reference and leaves its inputs as they were.
 */
export type BoxMeans = (planes: Float32Array[], width: number, height: number, radius: number) => Promise<Float32Array[]>;

export const boxMeansHere: BoxMeans = async (planes, width, height, radius) => planes.map((plane) => boxMean(plane, width, height, radius));

/** For each destination index along one axis: the two source indices and the weight of the second (pixel centres aligned). */
export interface AxisSamples {
  lo: Int32Array;
  hi: Int32Array;
  t: Float32Array;
}

export function axisSamples(destination: number, start: number, span: number, sourceSize: number): AxisSamples {
  const lo = new Int32Array(destination);
  const hi = new Int32Array(destination);
  const t = new Float32Array(destination);
  const scale = span / destination;
  for (let i = 0; i < destination; i++) {
    const at = Math.min(Math.max(start + (i + 0.5) * scale - 0.5, 0), sourceSize - 1);
    const base = Math.floor(at);
    lo[i] = base;
    hi[i] = Math.min(base + 1, sourceSize - 1);
    t[i] = at - base;
  }
  return { lo, hi, t };
}

/** Bilinear resampling of the rectangle (left, top, w, h) of `src` to width × height. */
export function resample(src: Plane, rect: { left: number; top: number; width: number; height: number }, width: number, height: number): Float32Array {
  const xs = axisSamples(width, rect.left, rect.width, src.width);
  const ys = axisSamples(height, rect.top, rect.height, src.height);
  const out = new Float32Array(width * height);
  const s = src.data;
  for (let y = 0; y < height; y++) {
    const r0 = ys.lo[y]! * src.width;
    const r1 = ys.hi[y]! * src.width;
    const ty = ys.t[y]!;
    for (let x = 0; x < width; x++) {
      const x0 = xs.lo[x]!;
      const x1 = xs.hi[x]!;
      const tx = xs.t[x]!;
      const top = s[r0 + x0]! + (s[r0 + x1]! - s[r0 + x0]!) * tx;
      const bottom = s[r1 + x0]! + (s[r1 + x1]! - s[r1 + x0]!) * tx;
      out[y * width + x] = top + (bottom - top) * ty;
    }
  }
  return out;
}
