// A band's RGBA rows compressed into PNG image data in the band's own thread (see png-file.ts for
// how the bands join), so that encoding a cutout runs on every core instead of on libpng's one:
// each chunk of composed rows is filtered and checksummed in WebAssembly (kernels/png.ts) and
// deflated as one block of literals, runs and repeated pixels (png-deflate.ts) or, for the bench's
// comparison, by Node's zlib at level 1 (`npm run bench` prints time and size of both against
// sharp's PNG).
import zlib from 'node:zlib';
import type { KernelExports } from './kernels.ts';
import { DeflateStream } from './png-deflate.ts';
import { pngChunk, type PngBand } from './png-file.ts';

/**
 * `runs`: png-deflate.ts, the product's; `counted`: the same with every block counted in full
 * (blockSampling), as before it packed large blocks in one pass; `zlib`: Node's zlib at level 1,
 * what it replaced. The bench compares the three.
 */
export type PngDeflater = 'runs' | 'counted' | 'zlib';

/**
 * The compressor's places in the kernels' memory: room for a chunk's scanlines (rows × (rowBytes +
 * 1)), for one row (the last one of the chunk before) and, for png-deflate.ts, the deflate stream's (see
 * DeflateStream: `tokensAt` and `outAt` sized for a chunk's scanlines).
 */
export interface ScanlinePlaces {
  scanlinesAt: number;
  previousAt: number;
  stateAt: number;
  tablesAt: number;
  tokensAt: number;
  outAt: number;
}

export class ScanlineCompressor {
  private readonly chunks: Buffer[] = [];
  private readonly stream: DeflateStream | null;
  private adler = 1;
  private length = 0;

  constructor(
    private readonly kernels: KernelExports,
    memory: ArrayBuffer,
    private readonly rowBytes: number,
    private readonly places: ScanlinePlaces,
    deflater: PngDeflater,
  ) {
    this.stream = deflater === 'zlib' ? null : new DeflateStream(kernels, memory, places.stateAt, places.tablesAt, places.tokensAt, places.outAt, deflater === 'counted');
  }

  /** Compresses the next `rows` RGBA rows of the band, which lie at `rowsAt` in the kernels' memory. */
  add(memory: ArrayBuffer, rowsAt: number, rows: number): void {
    const { kernels: k, rowBytes } = this;
    const { scanlinesAt, previousAt } = this.places;
    k.filterUp(rowsAt, rows, rowBytes, this.length > 0 ? previousAt : 0, scanlinesAt);
    const bytes = rows * (rowBytes + 1);
    this.adler = k.adler32(scanlinesAt, bytes, this.adler) >>> 0;
    this.length += bytes;
    const deflated = this.stream
      ? this.stream.block(memory, scanlinesAt, bytes)
      : zlib.deflateRawSync(new Uint8Array(memory, scanlinesAt, bytes), { level: 1, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    this.chunks.push(pngChunk('IDAT', deflated));
    new Uint8Array(memory).copyWithin(previousAt, rowsAt + (rows - 1) * rowBytes, rowsAt + rows * rowBytes);
  }

  /** The band's compressed scanlines, in a buffer of their own so that they can move to another thread. */
  finish(memory: ArrayBuffer): PngBand {
    if (this.stream) this.chunks.push(pngChunk('IDAT', this.stream.flush(memory)));
    const chunks = new Uint8Array(this.chunks.reduce((sum, chunk) => sum + chunk.length, 0));
    let at = 0;
    for (const chunk of this.chunks) {
      chunks.set(chunk, at);
      at += chunk.length;
    }
    return { chunks, adler: this.adler, length: this.length };
  }
}
