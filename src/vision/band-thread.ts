// A thread of the band pool (cutout-bands.ts): composes the rows it is given into the shared
// output. The photo and the output are shared memory; the matte's small working-size fields come
// as copies.
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
