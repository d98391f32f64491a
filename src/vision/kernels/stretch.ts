// AssemblyScript (see planes.ts): the model's input made larger. libvips enlarges through its
// general affine transform; the fixtures' preprocess stage in `npm run bench` measured 19.0 ms with
// it and 8.4 ms with this bilinear stretch (two sessions on the same kind of machine). It goes four
// values at a time and samples where libvips does (output x at source x · scale − ½, not at the
// centres' x + ½): the model's INT8 ranges and the recipes were measured on libvips' input, and
// centre-aligned sampling lowered the fixtures' mean IoU by 0.005–0.008 (`npm run bench:quality`).

/**
 * Stretches interleaved RGB bytes (width × height at `source`) to outWidth × outHeight, each axis
 * no smaller than the source's, bilinearly as libvips does, rounding to the nearest byte.
 * Output rows start `outStride` bytes apart at `out`. `work` takes 8 · outWidth + 12 · width + 128
 * bytes. Reads up to 15 bytes past the source's last row (the memory must extend that far).
 */
export function stretchRgb(source: usize, width: i32, height: i32, out: usize, outWidth: i32, outHeight: i32, outStride: i32, work: usize): void {
  const xLo = work;
  const xT = xLo + (<usize>outWidth << 2);
  const blended = xT + (<usize>outWidth << 2);
  const rowBytes = <usize>width * 3;
  // libvips leaves an image of the same size alone, but once either axis changes it resamples both.
  const same = outWidth == width && outHeight == height;
  const xScale = <f64>width / <f64>outWidth;
  for (let x = 0; x < outWidth; x++) {
    const at = same ? <f64>x : min(max(<f64>x * xScale - 0.5, 0.0), <f64>(width - 1));
    const base = <i32>floor(at);
    store<i32>(xLo + (<usize>x << 2), base * 12);
    store<f32>(xT + (<usize>x << 2), <f32>(at - <f64>base));
  }
  const yScale = <f64>height / <f64>outHeight;
  const half = f32x4.splat(0.5);
  for (let y = 0; y < outHeight; y++) {
    const at = same ? <f64>y : min(max(<f64>y * yScale - 0.5, 0.0), <f64>(height - 1));
    const base = <i32>floor(at);
    const ty = f32x4.splat(<f32>(at - <f64>base));
    const top = source + <usize>base * rowBytes;
    const bottom = source + <usize>min(base + 1, height - 1) * rowBytes;
    // The two source rows blended vertically once, sixteen bytes at a time, then sampled along the row.
    for (let i: usize = 0; i < rowBytes; i += 16) {
      const a = v128.load(top + i), b = v128.load(bottom + i);
      const aLow = i16x8.extend_low_i8x16_u(a), aHigh = i16x8.extend_high_i8x16_u(a);
      const bLow = i16x8.extend_low_i8x16_u(b), bHigh = i16x8.extend_high_i8x16_u(b);
      lerpStore(blended + (i << 2), i32x4.extend_low_i16x8_u(aLow), i32x4.extend_low_i16x8_u(bLow), ty);
      lerpStore(blended + (i << 2) + 16, i32x4.extend_high_i16x8_u(aLow), i32x4.extend_high_i16x8_u(bLow), ty);
      lerpStore(blended + (i << 2) + 32, i32x4.extend_low_i16x8_u(aHigh), i32x4.extend_low_i16x8_u(bHigh), ty);
      lerpStore(blended + (i << 2) + 48, i32x4.extend_high_i16x8_u(aHigh), i32x4.extend_high_i16x8_u(bHigh), ty);
    }
    // One spare pixel past the last repeats it, so the right edge samples without a test.
    for (let c: usize = 0; c < 3; c++) store<f32>(blended + ((rowBytes + c) << 2), load<f32>(blended + ((rowBytes - 3 + c) << 2)));
    const row = out + <usize>y * <usize>outStride;
    for (let x = 0; x < outWidth; x++) {
      const p = blended + <usize>load<i32>(xLo + (<usize>x << 2));
      const left = v128.load(p);
      const value = f32x4.add(f32x4.add(left, f32x4.mul(f32x4.sub(v128.load(p + 12), left), f32x4.splat(load<f32>(xT + (<usize>x << 2))))), half);
      const wide = i32x4.trunc_sat_f32x4_s(value);
      const bytes = i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(wide, wide), i16x8.narrow_i32x4_u(wide, wide));
      const o = row + <usize>x * 3;
      // Four bytes at once, the fourth overwritten by the next pixel; the row's last pixel writes only its three.
      if (x + 1 < outWidth) store<u32>(o, i32x4.extract_lane(bytes, 0));
      else {
        store<u16>(o, <u16>i16x8.extract_lane_u(bytes, 0));
        store<u8>(o + 2, <u8>i8x16.extract_lane_u(bytes, 2));
      }
    }
  }
}

// @ts-ignore: decorator
@inline
function lerpStore(at: usize, a: v128, b: v128, t: v128): void {
  // Signed conversion (the values are bytes): on x64 the unsigned one is a longer sequence.
  const fa = f32x4.convert_i32x4_s(a);
  v128.store(at, f32x4.add(fa, f32x4.mul(f32x4.sub(f32x4.convert_i32x4_s(b), fa), t)));
}
