// A thread of the band pool (cutout-bands.ts): composes the rows it is given into the shared
// output. The photo, the matte's fields and the output are all shared memory: nothing large is
// copied into the thread or kept there between jobs.
import { parentPort } from 'node:worker_threads';
import { composeRows } from './compose.ts';
import type { DecodedImage } from './decode.ts';
import type { Matte } from './matte.ts';

export interface BandRequest {
  id: number;
  image: DecodedImage;
  matte: Matte;
  from: number;
  to: number;
  out: Uint8Array;
}
export type BandReply = { id: number } | { id: number; error: string };

const port = parentPort!;
port.on('message', ({ id, image, matte, from, to, out }: BandRequest) => {
  try {
    composeRows(image, matte, from, to, out);
    port.postMessage({ id } satisfies BandReply);
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies BandReply);
  }
});
