// How the peer resamples: bilinear with the "asymmetric" coordinate mapping (ONNX Resize's name for
// it: destination pixel x samples the source at x · srcWidth / dstWidth, so pixel corners rather than
// centres line up), each value rounded to a byte. The peer enlarges the photo to the model's input
// this way and enlarges the mask back to the photo's size this way (its mask first truncated to
// bytes); sharp and our kernel sample at pixel centres instead, which shifts the result by a
// fraction of a pixel against the peer's. `npm run bench:quality -- --peer` measures how close a
// baseline made this way comes to the peer's own output.

interface Taps {
  near: Int32Array;
  far: Int32Array;
  weight: Float64Array;
}

function taps(source: number, destination: number): Taps {
  const near = new Int32Array(destination);
  const far = new Int32Array(destination);
  const weight = new Float64Array(destination);
  const scale = source / destination;
  for (let i = 0; i < destination; i++) {
    const at = i * scale;
    near[i] = Math.floor(at);
    far[i] = Math.min(Math.ceil(at), source - 1);
    weight[i] = at - near[i]!;
  }
  return { near, far, weight };
}

/** Interleaved bytes of `channels` per pixel, resampled from width × height to toWidth × toHeight. */
export function resizeAsPeer(bytes: Uint8Array, width: number, height: number, channels: number, toWidth: number, toHeight: number): Uint8Array {
  const out = new Uint8Array(toWidth * toHeight * channels);
  const xs = taps(width, toWidth);
  const ys = taps(height, toHeight);
  for (let y = 0; y < toHeight; y++) {
    const top = ys.near[y]! * width, bottom = ys.far[y]! * width, dy = ys.weight[y]!;
    for (let x = 0; x < toWidth; x++) {
      const left = xs.near[x]!, right = xs.far[x]!, dx = xs.weight[x]!;
      for (let c = 0; c < channels; c++) {
        const v =
          (1 - dx) * (1 - dy) * bytes[(top + left) * channels + c]! +
          dx * (1 - dy) * bytes[(top + right) * channels + c]! +
          (1 - dx) * dy * bytes[(bottom + left) * channels + c]! +
          dx * dy * bytes[(bottom + right) * channels + c]!;
        out[(y * toWidth + x) * channels + c] = Math.round(v);
      }
    }
  }
  return out;
}

/** The model's mask in [0, 1] as the peer turns it into bytes: scaled by 255 and truncated. */
export function truncatedMaskBytes(mask: Float32Array): Uint8Array {
  const bytes = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) bytes[i] = Math.min(255, Math.max(0, Math.floor(mask[i]! * 255)));
  return bytes;
}
