// AssemblyScript (see planes.ts): the cutout's RGBA rows at full size, from the photo's rows and
// the matte — the guided filter's coefficients applied at full resolution through the alpha curve,
// or alpha bytes already made; the colours of partly transparent pixels re-estimated from the
// colour fields (blur fusion). Every step mirrors, operation for operation and in the same float
// widths, the JavaScript it replaced, so the bytes are the same.

/** Where the bilinear samples of a size-`sourceSize` axis fall for each of `destination` positions (pixel centres aligned). */
function axisSamples(destination: i32, sourceSize: i32, lo: usize, hi: usize, t: usize): void {
  const scale = <f64>sourceSize / <f64>destination;
  for (let i = 0; i < destination; i++) {
    const at = min(max((<f64>i + 0.5) * scale - 0.5, 0.0), <f64>(sourceSize - 1));
    const base = <i32>floor(at);
    store<i32>(lo + (<usize>i << 2), base);
    if (hi) store<i32>(hi + (<usize>i << 2), min(base + 1, sourceSize - 1));
    store<f32>(t + (<usize>i << 2), <f32>(at - <f64>base));
  }
}

/**
 * For each working cell of the coefficients (planes a_r, a_g, a_b, b of cw × ch at `coefficients`):
 * 1 where q = a·I + b maps through the curve to 255 whatever the colour I in [0, 1]³, −1 where it
 * maps to 0 whatever the colour, 0 where the colour decides. The margin keeps float rounding from
 * ever deciding a settled pixel.
 */
export function settleCells(coefficients: usize, cw: i32, ch: i32, curve: usize, curveLast: i32, settled: usize): void {
  let zeros = 0;
  while (zeros <= curveLast && load<u8>(curve + <usize>zeros) == 0) zeros++;
  let firstFull = curveLast + 1;
  while (firstFull > 0 && load<u8>(curve + <usize>(firstFull - 1)) == 255) firstFull--;
  const n = cw * ch;
  const size = <usize>n << 2;
  // Four cells at a time in f32: its rounding (a few parts in 10⁷ of the terms) is far inside the
  // margin (10⁻⁵ of them), so a cell settled here is settled for the exact arithmetic too.
  const last = f32x4.splat(<f32>curveLast);
  const zero = f32x4.splat(0);
  const full = firstFull <= curveLast ? f32x4.splat(<f32>firstFull - 0.5) : f32x4.splat(NaN);
  const clear = zeros > 0 ? f32x4.splat(<f32>zeros - 0.5) : f32x4.splat(NaN);
  const base = f32x4.splat(0.05);
  const relative = f32x4.splat(<f32>(1e-5 * <f64>curveLast));
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const at = coefficients + (<usize>i << 2);
    const a0 = v128.load(at), a1 = v128.load(at + size), a2 = v128.load(at + 2 * size), b = v128.load(at + 3 * size);
    const low = f32x4.mul(f32x4.add(f32x4.add(b, f32x4.min(a0, zero)), f32x4.add(f32x4.min(a1, zero), f32x4.min(a2, zero))), last);
    const high = f32x4.mul(f32x4.add(f32x4.add(b, f32x4.max(a0, zero)), f32x4.add(f32x4.max(a1, zero), f32x4.max(a2, zero))), last);
    const sum = f32x4.add(f32x4.add(f32x4.abs(b), f32x4.abs(a0)), f32x4.add(f32x4.abs(a1), f32x4.abs(a2)));
    const margin = f32x4.add(base, f32x4.mul(relative, sum));
    const isFull = f32x4.ge(low, f32x4.add(full, margin));
    const isClear = v128.andnot(f32x4.lt(high, f32x4.sub(clear, margin)), isFull);
    // 1 where full, −1 where clear, 0 elsewhere, narrowed to four bytes.
    const state = i32x4.sub(v128.and(isFull, i32x4.splat(1)), v128.and(isClear, i32x4.splat(1)));
    const narrow = i16x8.narrow_i32x4_s(state, state);
    store<u32>(settled + <usize>i, i32x4.extract_lane(i8x16.narrow_i16x8_s(narrow, narrow), 0));
  }
  for (; i < n; i++) store<i8>(settled + <usize>i, settledCell(coefficients + (<usize>i << 2), size, zeros, firstFull, curveLast));
}

/** One cell's state as settleCells decides it, for the cells after the last four. */
function settledCell(at: usize, size: usize, zeros: i32, firstFull: i32, curveLast: i32): i8 {
  const last = <f64>curveLast;
  const a0 = <f64>load<f32>(at), a1 = <f64>load<f32>(at + size), a2 = <f64>load<f32>(at + 2 * size), b = <f64>load<f32>(at + 3 * size);
  const low = (b + min(a0, 0.0) + min(a1, 0.0) + min(a2, 0.0)) * last;
  const high = (b + max(a0, 0.0) + max(a1, 0.0) + max(a2, 0.0)) * last;
  const margin = 0.05 + 1e-5 * last * (abs(b) + abs(a0) + abs(a1) + abs(a2));
  if (firstFull <= curveLast && low >= <f64>firstFull - 0.5 + margin) return 1;
  if (zeros > 0 && high < <f64>zeros - 0.5 - margin) return -1;
  return 0;
}

/** Bytes of per-row working space composeRows needs at `work`. */
export function composeWorkSize(width: i32, cw: i32): i32 {
  return 4 * (width + 8) + 4 * (cw + 8) * 10 + 20 * (width + 8) + 64;
}

/**
 * Rows [first, first + rows) of a width × height cutout. `pixels` holds those rows of the photo
 * (`channels` 3 or 4, interleaved), `out` receives their RGBA (every byte written). The alpha comes
 * from `alphaBytes` (those rows, when not 0) or else from the guided coefficients (cw × ch) with
 * `curve` and the `settled` cells; `colours` (6 planes of fw × fh: F r, g, b then B r, g, b), when not
 * 0, re-colours partly transparent pixels. Of the working-size planes only the rows these full-size
 * rows sample need be there: coefficient and settled rows [cellsFrom, cellsFrom + cellsHeld), colour
 * rows [coloursFrom, coloursFrom + coloursHeld). `work` is scratch of composeWorkSize bytes.
 */
export function composeRows(
  pixels: usize, out: usize, channels: i32, width: i32, height: i32, first: i32, rows: i32,
  alphaBytes: usize, coefficients: usize, cw: i32, ch: i32, cellsFrom: i32, cellsHeld: i32, curve: usize, curveLast: i32, settled: usize,
  colours: usize, fw: i32, fh: i32, coloursFrom: i32, coloursHeld: i32, work: usize,
): void {
  // Per-row working space.
  const alphaRow = work;
  const rowSettled = alphaRow + (<usize>(width + 8) & ~7);
  const firstPixel = rowSettled + (<usize>(cw + 8) & ~7);
  const fields = firstPixel + (<usize>(cw + 8) << 2);
  const fieldStride = <usize>(cw + 8) << 2;
  const xLo = fields + 8 * fieldStride;
  const xT = xLo + (<usize>(width + 8) << 2);
  const cLo = xT + (<usize>(width + 8) << 2);
  const cHi = cLo + (<usize>(width + 8) << 2);
  const cT = cHi + (<usize>(width + 8) << 2);
  const guided = alphaBytes == 0;
  if (guided) {
    axisSamples(width, cw, xLo, 0, xT);
    // The first full-size column of each working column (lo only grows along a row), and width at the end.
    for (let k = 0, x = 0; k <= cw; k++) {
      while (x < width && load<i32>(xLo + (<usize>x << 2)) < k) x++;
      store<i32>(firstPixel + (<usize>k << 2), x);
    }
  }
  if (colours) axisSamples(width, fw, cLo, cHi, cT);
  const cells = <usize>(cw * cellsHeld) << 2;
  const colourPlane = <usize>(fw * coloursHeld) << 2;
  let settledFor = -1;
  let preparedRow = -1;
  for (let r = 0; r < rows; r++) {
    const y = first + r;
    const pixelRow = pixels + <usize>r * <usize>width * <usize>channels;
    if (!guided) memory.copy(alphaRow, alphaBytes + <usize>r * <usize>width, <usize>width);
    else {
      sampleRow(y, height, ch);
      const r0 = (sampleLo - cellsFrom) * cw, r1 = (sampleHi - cellsFrom) * cw;
      const ty = sampleT;
      if (r0 != settledFor) {
        for (let x = 0; x < cw; x++) {
          const x1 = x + 1 < cw ? x + 1 : x;
          const v = load<i8>(settled + <usize>(r0 + x));
          const same = v != 0 && load<i8>(settled + <usize>(r0 + x1)) == v && load<i8>(settled + <usize>(r1 + x)) == v && load<i8>(settled + <usize>(r1 + x1)) == v;
          store<i8>(rowSettled + <usize>x, same ? v : 0);
        }
        settledFor = r0;
      }
      // Each unsettled working column's interpolated coefficients (colour ones over 255) and their slope to the next column.
      for (let x = 0; x < cw; x++) {
        if (load<i8>(rowSettled + <usize>x) != 0) continue;
        const j = x + 1 < cw ? 1 : 0;
        const i0 = <usize>(r0 + x) << 2, i1 = <usize>(r1 + x) << 2, i0j = <usize>(r0 + x + j) << 2, i1j = <usize>(r1 + x + j) << 2;
        const at = <usize>x << 2;
        for (let c = 0; c < 4; c++) {
          const plane = coefficients + <usize>c * cells;
          let v0 = <f64>load<f32>(plane + i0) + (<f64>load<f32>(plane + i1) - <f64>load<f32>(plane + i0)) * ty;
          let v1 = <f64>load<f32>(plane + i0j) + (<f64>load<f32>(plane + i1j) - <f64>load<f32>(plane + i0j)) * ty;
          if (c < 3) {
            v0 = v0 / 255;
            v1 = v1 / 255;
          }
          store<f32>(fields + <usize>(2 * c) * fieldStride + at, <f32>v0);
          store<f32>(fields + <usize>(2 * c + 1) * fieldStride + at, <f32>(v1 - v0));
        }
      }
      const last = <f64>curveLast;
      for (let x0 = 0; x0 < cw; ) {
        const fixed = load<i8>(rowSettled + <usize>x0);
        let end = x0 + 1;
        while (end < cw && load<i8>(rowSettled + <usize>end) == fixed) end++;
        const from = load<i32>(firstPixel + (<usize>x0 << 2)), to = load<i32>(firstPixel + (<usize>end << 2));
        if (fixed != 0) memory.fill(alphaRow + <usize>from, fixed > 0 ? 255 : 0, <usize>(to - from));
        else {
          for (let x = from; x < to; x++) {
            const xc = <usize>load<i32>(xLo + (<usize>x << 2)) << 2;
            const tx = <f64>load<f32>(xT + (<usize>x << 2));
            const p = pixelRow + <usize>x * <usize>channels;
            const q =
              (<f64>load<f32>(fields + xc) + <f64>load<f32>(fields + fieldStride + xc) * tx) * <f64>load<u8>(p) +
              (<f64>load<f32>(fields + 2 * fieldStride + xc) + <f64>load<f32>(fields + 3 * fieldStride + xc) * tx) * <f64>load<u8>(p + 1) +
              (<f64>load<f32>(fields + 4 * fieldStride + xc) + <f64>load<f32>(fields + 5 * fieldStride + xc) * tx) * <f64>load<u8>(p + 2) +
              <f64>load<f32>(fields + 6 * fieldStride + xc) +
              <f64>load<f32>(fields + 7 * fieldStride + xc) * tx;
            const k = q * last;
            const index = k <= 0 ? 0 : k >= last ? curveLast : <i32>(k + 0.5);
            store<u8>(alphaRow + <usize>x, load<u8>(curve + <usize>index));
          }
        }
        x0 = end;
      }
    }
    const outRow = out + <usize>r * <usize>width * 4;
    for (let x = 0; x < width; ) {
      const ours = <i32>load<u8>(alphaRow + <usize>x);
      // Fully transparent pixels are zero, colours included; runs of opaque pixels are copied whole.
      if (ours == 0) {
        const start = x;
        x = runEnd(alphaRow, x + 1, width, 0);
        memory.fill(outRow + (<usize>start << 2), 0, <usize>(x - start) << 2);
        continue;
      }
      if (ours == 255 && channels == 3) {
        let o = x;
        x = runEnd(alphaRow, x + 1, width, 255);
        // Four pixels at a time: twelve bytes spread into four RGBA words, alpha set. The load reads
        // four bytes past them, within the photo's chunk or the output area that follows it.
        const opaque = i32x4.splat(0xff000000);
        for (; o + 4 <= x; o += 4) {
          const rgb = v128.load(pixelRow + <usize>o * 3);
          v128.store(outRow + (<usize>o << 2), v128.or(i8x16.swizzle(rgb, i8x16(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1)), opaque));
        }
        for (; o < x; o++) {
          const p = pixelRow + <usize>o * 3;
          store<u32>(outRow + (<usize>o << 2), 0xff000000 | <u32>load<u8>(p) | (<u32>load<u8>(p + 1) << 8) | (<u32>load<u8>(p + 2) << 16));
        }
        continue;
      }
      const p = pixelRow + <usize>x * <usize>channels;
      const alpha = channels == 4 ? <i32>floor(<f64>(ours * <i32>load<u8>(p + 3)) / 255 + 0.5) : ours;
      const q = outRow + (<usize>x << 2);
      if (alpha != 0) {
        if (colours && ours < 255) {
          if (y != preparedRow) {
            sampleRow(y, height, fh);
            colourTop = <usize>((sampleLo - coloursFrom) * fw) << 2;
            colourBottom = <usize>((sampleHi - coloursFrom) * fw) << 2;
            colourT = sampleT;
            preparedRow = y;
          }
          const x0 = <usize>load<i32>(cLo + (<usize>x << 2)) << 2, x1 = <usize>load<i32>(cHi + (<usize>x << 2)) << 2;
          const tx = <f64>load<f32>(cT + (<usize>x << 2));
          const a = <f64>ours / 255;
          for (let c = 0; c < 3; c++) {
            const fPlane = colours + <usize>c * colourPlane, bPlane = colours + <usize>(c + 3) * colourPlane;
            const f0 = colourAt(fPlane, x0), b0 = colourAt(bPlane, x0);
            const f = f0 + (colourAt(fPlane, x1) - f0) * tx;
            const b = b0 + (colourAt(bPlane, x1) - b0) * tx;
            let v = f + a * (<f64>load<u8>(p + <usize>c) - a * f - (1 - a) * b);
            v = v < 0 ? 0 : v > 255 ? 255 : v;
            store<u8>(q + <usize>c, <u8>floor(v + 0.5));
          }
        } else {
          store<u8>(q, load<u8>(p));
          store<u8>(q + 1, load<u8>(p + 1));
          store<u8>(q + 2, load<u8>(p + 2));
        }
        store<u8>(q + 3, <u8>alpha);
      } else store<u32>(q, 0);
      x++;
    }
  }
}

/** The end of the run of `value` in `row` from `x` on (at most `width`), sixteen bytes at a time. */
// @ts-ignore: decorator
@inline
function runEnd(row: usize, x: i32, width: i32, value: u8): i32 {
  const splat = i8x16.splat(value);
  for (; x + 16 <= width; x += 16) {
    const same = <u32>i8x16.bitmask(i8x16.eq(v128.load(row + <usize>x), splat));
    if (same != 0xffff) return x + <i32>ctz(~same);
  }
  while (x < width && load<u8>(row + <usize>x) == value) x++;
  return x;
}

// The bilinear sample of a full-size row on a smaller axis (see axisSamples), left in globals: the
// module keeps no data in its memory, which the caller lays out from offset 0.
let sampleLo: i32 = 0;
let sampleHi: i32 = 0;
let sampleT: f64 = 0;

function sampleRow(y: i32, height: i32, size: i32): void {
  const at = min(max((<f64>y + 0.5) * (<f64>size / <f64>height) - 0.5, 0.0), <f64>(size - 1));
  const base = <i32>floor(at);
  sampleLo = base;
  sampleHi = min(base + 1, size - 1);
  // Held as f32, as the JavaScript's Float32Array of weights held it.
  sampleT = <f64><f32>(at - <f64>base);
}

// The colour fields' rows that the current full-size row samples (byte offsets into each plane) and
// its weight between them, set by composeRows at a row's first partly transparent pixel.
let colourTop: usize = 0;
let colourBottom: usize = 0;
let colourT: f64 = 0;

/**
 * A colour field at byte offset `at` of its row, interpolated to the current full-size row, times 255
 * and held as f32: computed where a pixel needs it rather than along the whole row, since few pixels
 * of a row are partly transparent.
 */
// @ts-ignore: decorator
@inline
function colourAt(plane: usize, at: usize): f64 {
  const top = <f64>load<f32>(plane + colourTop + at);
  return <f64><f32>((top + (<f64>load<f32>(plane + colourBottom + at) - top) * colourT) * 255);
}
