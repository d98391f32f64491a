// AssemblyScript (see planes.ts): the blur-fusion colour fields at half the working size.
import { boxMean, planeAt } from './planes';

/**
 * Blur-fusion colour fields (Forte & Pitié 2021), two steps: a wide window, then a narrow one. At
 * `base`: 12 planes of width × height f32 followed by 2 · width f64. Planes 0–3 hold the photo's r, g,
 * b and the alpha on entry; on return planes 5–7 hold the smooth foreground colours and 8–10 the
 * smooth background colours. Plane 4 takes the blurred alpha, plane 11 the row sums.
 */
export function colourFields(base: usize, width: i32, height: i32, wideRadius: i32, narrowRadius: i32): void {
  const n = width * height;
  const size = <usize>n << 2;
  const scratch = planeAt(base, size, 11);
  const column = planeAt(base, size, 12);
  const inverseCols = column + (<usize>width << 3);
  // First step: foreground and background both start as the photo itself.
  for (let c = 0; c < 3; c++) {
    memory.copy(planeAt(base, size, 5 + c), planeAt(base, size, c), size);
    memory.copy(planeAt(base, size, 8 + c), planeAt(base, size, c), size);
  }
  for (let step = 0; step < 2; step++) {
    const radius = step == 0 ? wideRadius : narrowRadius;
    memory.copy(planeAt(base, size, 4), planeAt(base, size, 3), size);
    // F weighted by α, B by 1 − α, then all seven blurred.
    for (let c = 0; c < 3; c++) weighByAlpha(planeAt(base, size, 5 + c), planeAt(base, size, 8 + c), planeAt(base, size, 3), n);
    for (let k = 4; k < 11; k++) boxMean(planeAt(base, size, k), scratch, column, inverseCols, width, height, radius);
    for (let i = 0; i < n; i++) {
      const at = <usize>i << 2;
      const a = <f64>load<f32>(planeAt(base, size, 4) + at);
      const toFg = 1.0 / (a + 1e-5), toBg = 1.0 / (1 - a + 1e-5);
      for (let c = 0; c < 3; c++) {
        const f = planeAt(base, size, 5 + c) + at, b = planeAt(base, size, 8 + c) + at;
        store<f32>(f, <f32>(<f64>load<f32>(f) * toFg));
        store<f32>(b, <f32>(<f64>load<f32>(b) * toBg));
      }
    }
    // After the first step the foreground is re-solved from the photo (the next step's F); the
    // background stays the smooth estimate.
    if (step == 0) {
      for (let i = 0; i < n; i++) {
        const at = <usize>i << 2;
        const a = <f64>load<f32>(planeAt(base, size, 3) + at);
        for (let c = 0; c < 3; c++) {
          const f = planeAt(base, size, 5 + c) + at;
          const F = <f64>load<f32>(f), B = <f64>load<f32>(planeAt(base, size, 8 + c) + at), I = <f64>load<f32>(planeAt(base, size, c) + at);
          store<f32>(f, <f32>min(1.0, max(0.0, F + a * (I - a * F - (1 - a) * B))));
        }
      }
    }
  }
}

/** f ·= α and b ·= 1 − α over n values, four at a time. */
function weighByAlpha(f: usize, b: usize, alpha: usize, n: i32): void {
  const one = f32x4.splat(1);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const at = <usize>i << 2;
    const a = v128.load(alpha + at);
    v128.store(f + at, f32x4.mul(v128.load(f + at), a));
    v128.store(b + at, f32x4.mul(v128.load(b + at), f32x4.sub(one, a)));
  }
  for (; i < n; i++) {
    const at = <usize>i << 2;
    const a = load<f32>(alpha + at);
    store<f32>(f + at, load<f32>(f + at) * a);
    store<f32>(b + at, load<f32>(b + at) * (1 - a));
  }
}
