// Where a task's working-size planes live (the guide, the mask, the guided filter's coefficients, the
// colour fields), and the full-size rows the band threads compose from (the photo's, any alpha
// bytes): in shared memory that the band threads read and write in place, kept from one task to the
// next. Copied out to each thread and handed back, as they were, every plane was allocated afresh
// several times a task; planes that live through a task's inference outlast the young generation,
// and V8 collects the whole heap each time such memory has grown by a fixed amount, each collection
// a pause of the main thread in the middle of the work around inference (`npm run bench` prints the
// collections per image). Shared memory is not counted towards that amount at all, in any thread.

/** Float planes and byte rows handed out one after another; `release` gives the memory back for another task's. */
export interface PlaneSet {
  /** A plane of `length` values for its taker to write in full: one of reused memory holds what another task left there. */
  plane(length: number): Float32Array;
  /**
   * `length` bytes, likewise for their taker to write, or null where the set's bytes would grow past
   * rowsAtMost: the taker then keeps its data in buffers of its own.
   */
  bytes(length: number): Uint8Array | null;
  /** Every plane handed out is the next task's to overwrite: call it once nothing reads them any more. */
  release(): void;
}

/** Planes as ordinary arrays, for work done on the calling thread. */
export const heapPlanes: PlaneSet = { plane: (length) => new Float32Array(length), bytes: () => null, release: () => {} };

/** Planes start on 64-byte boundaries (a cache line; the kernels load 16 bytes at a time). */
const alignment = 64;

class SharedPlanes implements PlaneSet {
  /** Bytes handed out from the last block, and from all of them. */
  private used = 0;
  private taken = 0;
  /** Of `taken`, what `bytes` handed out. */
  private rows = 0;
  private released = false;

  constructor(private readonly blocks: SharedArrayBuffer[]) {}

  plane(length: number): Float32Array {
    const { block, offset } = this.take(length * 4);
    return new Float32Array(block, offset, length);
  }

  bytes(length: number): Uint8Array | null {
    if (this.rows + length > rowsAtMost) return null;
    this.rows += length;
    const { block, offset } = this.take(length);
    return new Uint8Array(block, offset, length);
  }

  private take(length: number): { block: SharedArrayBuffer; offset: number } {
    if (this.released) throw new Error('planes taken from a released set');
    const bytes = Math.ceil(length / alignment) * alignment;
    let block = this.blocks.at(-1);
    if (!block || this.used + bytes > block.byteLength) {
      // A block of its own for what does not fit; the next task's set has room for everything.
      block = new SharedArrayBuffer(bytes);
      this.blocks.push(block);
      this.used = 0;
    }
    const offset = this.used;
    this.used += bytes;
    this.taken += bytes;
    return { block, offset };
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    // A set that outgrew its block needs as much again: the next one gets it in one block.
    released.push(this.blocks.length <= 1 ? this.blocks : [new SharedArrayBuffer(Math.max(this.taken, this.blocks[0]!.byteLength))]);
  }
}

/**
 * The most a set hands out as byte rows: room for a 12 MP photo's rows with 4 channels (48 MB), beside the
 * planes at the working size (about 28 MB at 640²). Every released set is kept, never left to the
 * collector: shared memory does not count towards V8's next full collection, in this thread or in
 * the band threads that saw it, so a set let go could stay resident for many tasks (a throwaway loop
 * of 12 MP WebP cutouts, when sets too large to keep were let go, grew the process by about 100 MB a
 * photo). What does not fit stays in buffers of its own, as before the rows were shared: the decode
 * of a photo over 16 MP (its room is asked for four channels), the rows of one over 22 MP (three),
 * a 12 MP cutout's RGBA for WebP beside its photo's rows.
 */
export const rowsAtMost = 64 << 20;

/**
 * Memory given back, one entry per released set: a process holds as many as it has run tasks at
 * once, each the size of its largest set, at most rowsAtMost beside the planes.
 */
const released: SharedArrayBuffer[][] = [];

/** A set of shared planes, in memory a released set left when there is some; a set never released is collected like any other memory. */
export function sharedPlanes(): PlaneSet {
  return new SharedPlanes(released.pop() ?? []);
}
