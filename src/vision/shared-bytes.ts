// Full-size pixel buffers live in shared memory, so the band threads (cutout-bands.ts) read and
// write them in place instead of each receiving a copy of a 12 MP image.

/** `bytes` in shared memory (copied once unless they already are), as a Buffer that sharp accepts. */
export function sharedBytes(bytes: Uint8Array): Buffer {
  if (bytes.buffer instanceof SharedArrayBuffer) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const shared = Buffer.from(new SharedArrayBuffer(bytes.byteLength));
  shared.set(bytes);
  return shared;
}

/** A zero-filled shared buffer. */
export function sharedZeros(length: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(length));
}

/** `values` copied into shared memory. */
export function sharedFloats(values: Float32Array): Float32Array {
  const shared = new Float32Array(new SharedArrayBuffer(values.byteLength));
  shared.set(values);
  return shared;
}
