// Reading ISO base media file format boxes (HEIF and AVIF files) strictly within their bounds,
// for what libvips does not report of such a file: an AVIF's nclx colours (avif-colour.ts) and the
// size of a grid or overlay image (heif-canvas.ts).

export interface Box {
  type: string;
  /** Where the body starts (after size, type and any 64-bit size) and where the box ends. */
  start: number;
  end: number;
}

export class MalformedBox extends Error {}

/** Reads big-endian integers strictly within [position, end). */
export class Reader {
  constructor(
    private readonly bytes: Uint8Array,
    private position: number,
    private readonly end: number,
  ) {}

  u8(): number {
    return this.take(1)[0]!;
  }

  u16(): number {
    const [a, b] = this.take(2);
    return (a! << 8) | b!;
  }

  u32(): number {
    return this.u16() * 65536 + this.u16();
  }

  skip(count: number): void {
    this.take(count);
  }

  text(count: number): string {
    return String.fromCharCode(...this.take(count));
  }

  at(): number {
    return this.position;
  }

  private take(count: number): Uint8Array {
    if (this.position + count > this.end) throw new MalformedBox();
    this.position += count;
    return this.bytes.subarray(this.position - count, this.position);
  }
}

/**
 * Where a box is looked for among those filling [start, end): at most the first 100, libheif's
 * limit for a box's children. At the top level libheif reads on, and an upload of 25 MB of empty
 * boxes before its meta took a second and 340 MB to list, and half a second to walk through.
 */
const maxBoxes = 100;

/** The boxes filling [start, end) one after another, read as they are asked for, at most `limit` of them. */
export function* boxes(bytes: Uint8Array, start: number, end: number, limit = maxBoxes): Generator<Box> {
  for (let position = start, count = 0; position < end; count++) {
    if (count === limit) throw new MalformedBox();
    const at = new Reader(bytes, position, end);
    let size = at.u32();
    const type = at.text(4);
    if (size === 1) size = at.u32() * 2 ** 32 + at.u32();
    else if (size === 0) size = end - position;
    if (size < at.at() - position || position + size > end) throw new MalformedBox();
    yield { type, start: at.at(), end: position + size };
    position += size;
  }
}

/** The meta box among a HEIF file's top-level boxes `top`, read as they are asked for: none unless the first is ftyp. */
export function metaBox(top: Iterator<Box> & Iterable<Box>): Box | undefined {
  if (top.next().value?.type !== 'ftyp') return undefined;
  return find(top, 'meta');
}

export function find(found: Iterable<Box>, type: string): Box | undefined {
  for (const box of found) if (box.type === type) return box;
  return undefined;
}

export function nth(found: Iterable<Box>, index: number): Box | undefined {
  let at = 0;
  for (const box of found) if (at++ === index) return box;
  return undefined;
}

/** Where a full box's body starts, after its version and flags. */
export function fullBoxBody(bytes: Uint8Array, box: Box): number {
  const at = new Reader(bytes, box.start, box.end);
  at.skip(4);
  return at.at();
}

/** More boxes at one level than boxesUntilMalformed walks: no real file has so many. */
export class TooManyBoxes extends Error {}

/**
 * How many boxes boxesUntilMalformed walks at one level: far above what libheif takes in a box (100
 * children, 256 items) and what any real file holds, far below what a crafted upload can pack (25 MB
 * of empty boxes is 3 million, half a second of the event loop to walk through).
 */
export const maxWalkedBoxes = 4096;

/**
 * Every box filling [start, end) up to the first that does not parse, up to `limit` of them: for a
 * check that must see what libheif sees, which takes more children than maxBoxes and may read past
 * bytes that are no box. Past the limit it throws TooManyBoxes, and the check refuses the file
 * rather than pass what it could not see.
 */
export function* boxesUntilMalformed(bytes: Uint8Array, start: number, end: number, limit = maxWalkedBoxes): Generator<Box> {
  let count = 0;
  try {
    for (const box of boxes(bytes, start, end, Infinity)) {
      if (++count > limit) throw new TooManyBoxes();
      yield box;
    }
  } catch (err) {
    if (!(err instanceof MalformedBox)) throw err;
  }
}
