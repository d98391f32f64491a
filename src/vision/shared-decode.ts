// A large photo decoded in a band thread (cutout-bands.ts, decodeInThread) into the task's shared
// memory (shared-planes.ts), where the main thread and the band threads read it in place. Decoded on
// the main thread, its pixels came as one large buffer that V8 counts towards the main thread's next
// full collection, and at 12 MP that buffer alone set one going in most tasks: a pause of the main
// thread (10–24 ms on Zen 5) in the middle of the work around inference. In a band thread the buffer
// counts towards that thread's own collections, whose heap is small, and shared memory counts
// towards none.
import { decodeImage, type SourceColours } from './decode.ts';

export interface DecodeJob {
  /** The encoded bytes (decodableBytes). */
  input: Uint8Array;
  maxPixels: number;
  colours: SourceColours;
  /** Shared memory for the pixels: room for four channels at the header's size. */
  into: Uint8Array;
}

/**
 * The decoded image's size; its pixels are in `into`, or, where they did not fit there (a size the
 * header did not give), in `pixels`.
 */
export interface DecodedInto {
  width: number;
  height: number;
  channels: 3 | 4;
  pixels?: Uint8Array;
}

/** Decodes as decodeImage does, throwing the same errors. */
export async function decodeInto({ input, maxPixels, colours, into }: DecodeJob): Promise<DecodedInto> {
  const { pixels, width, height, channels } = await decodeImage(Buffer.from(input.buffer, input.byteOffset, input.length), maxPixels, colours);
  if (pixels.length > into.length) return { width, height, channels, pixels };
  into.set(pixels);
  return { width, height, channels };
}
