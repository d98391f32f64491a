// The sizes a HEIF or AVIF file makes its decoder work at, which libvips does not report: it gives
// the primary image's size after its transformations, and the pixel cap was checked against that.
// - An image derived from others (a grid of coded tiles, an overlay on a canvas) is assembled at the
//   size its grid or overlay descriptor gives, whatever its ispe property says: a 919-byte AVIF whose
//   ispe said 50×50 had libheif assemble 16×16 references to one 1024×1024 tile, 16384×16384 pixels
//   (1 GB, 4 s), before libvips found that the sizes differ.
// - A coded image is decoded whole at its ispe size before a clean aperture (clap) crops it: a
//   2048×2048 AVIF cropped to 50×50 passed a cap of 100,000 pixels.
// So the caps are also checked against every such size, before decoding.
import { TaskError } from '../domain/errors.ts';
import { boxesUntilMalformed, find, fullBoxBody, MalformedBox, maxWalkedBoxes, metaBox, Reader, TooManyBoxes, type Box } from './iso-boxes.ts';

export interface Canvas {
  width: number;
  height: number;
}

/** Item types whose data declares the size they are assembled at. */
const derivedTypes: ReadonlySet<string> = new Set(['grid', 'iovl']);

/**
 * The largest size an ispe property, a grid or an overlay of `file` declares; undefined where there
 * is none or the boxes do not parse. A file with more boxes or items in one place than
 * maxWalkedBoxes is refused as unsupported_image: its sizes cannot be checked within that bound.
 */
export function largestDeclaredSize(file: Uint8Array): Canvas | undefined {
  try {
    // Every top-level box and every child, as libheif reads them, up to maxWalkedBoxes at each level.
    const meta = metaBox(boxesUntilMalformed(file, 0, file.length));
    if (!meta) return undefined;
    const children = new Map<string, Box>();
    for (const child of boxesUntilMalformed(file, fullBoxBody(file, meta), meta.end)) if (!children.has(child.type)) children.set(child.type, child);
    const sizes = [...codedSizes(file, children.get('iprp')), ...derivedSizes(file, children)];
    return sizes.reduce<Canvas | undefined>((largest, size) => (!largest || size.width * size.height > largest.width * largest.height ? size : largest), undefined);
  } catch (err) {
    if (err instanceof MalformedBox) return undefined;
    if (err instanceof TooManyBoxes) {
      throw new TaskError('unsupported_image', `The HEIF/AVIF file has more than ${maxWalkedBoxes} boxes or items in one place, which no photo has; it is not read.`);
    }
    throw err;
  }
}

/** The ispe properties' sizes: each coded image's own, before any crop. */
function codedSizes(file: Uint8Array, iprp: Box | undefined): Canvas[] {
  const ipco = iprp && find(boxesUntilMalformed(file, iprp.start, iprp.end), 'ipco');
  if (!ipco) return [];
  return [...boxesUntilMalformed(file, ipco.start, ipco.end)].filter((property) => property.type === 'ispe').map((ispe) => spatialExtents(file, ispe));
}

/** The sizes that grid and overlay items declare in their data. */
function derivedSizes(file: Uint8Array, children: Map<string, Box>): Canvas[] {
  const [iinf, iloc, idat] = [children.get('iinf'), children.get('iloc'), children.get('idat')];
  const derived = iinf ? derivedItems(file, iinf) : new Map<number, string>();
  if (derived.size === 0 || !iloc) return [];
  const sizes: Canvas[] = [];
  for (const { item, method, extents } of locations(file, iloc)) {
    const type = derived.get(item);
    // Construction method 0: an offset in the file; 1: in the idat box.
    const within = method === 0 ? { start: 0, end: file.length } : method === 1 ? idat : undefined;
    if (!type || !within) continue;
    const data = joined(file, within, extents);
    sizes.push(canvasOf(new Reader(data, 0, data.length), type));
  }
  return sizes;
}

/** The longest descriptor read: an overlay's with 32-bit sizes (version, flags, fill colour, width, height). */
const descriptorBytes = 20;

/**
 * The start of an item's data: its extents joined, as libheif reads them. A descriptor split across
 * extents, read from the first one's offset on, gave whatever bytes follow that extent as its size.
 */
function joined(file: Uint8Array, within: { start: number; end: number }, extents: Extent[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const { offset, length } of extents) {
    const start = within.start + offset;
    // A length of 0: the rest of the file or idat.
    const end = length === 0 ? within.end : start + length;
    if (end > within.end) throw new MalformedBox();
    parts.push(file.subarray(start, Math.min(end, start + descriptorBytes)));
  }
  return Buffer.concat(parts);
}

function spatialExtents(file: Uint8Array, ispe: Box): Canvas {
  const at = new Reader(file, fullBoxBody(file, ispe), ispe.end);
  return { width: at.u32(), height: at.u32() };
}

/** The grid and overlay items that an iinf box lists, by item id. */
function derivedItems(file: Uint8Array, iinf: Box): Map<number, string> {
  const at = new Reader(file, iinf.start, iinf.end);
  const version = at.u8();
  at.skip(3);
  if (version === 0) at.u16();
  else at.u32();
  const found = new Map<number, string>();
  for (const infe of boxesUntilMalformed(file, at.at(), iinf.end)) {
    if (infe.type !== 'infe') continue;
    const entry = new Reader(file, infe.start, infe.end);
    const entryVersion = entry.u8();
    entry.skip(3);
    // Versions 0 and 1 name no item type.
    if (entryVersion < 2) continue;
    const item = entryVersion === 2 ? entry.u16() : entry.u32();
    entry.skip(2); // protection index
    const type = entry.text(4);
    if (derivedTypes.has(type)) found.set(item, type);
  }
  return found;
}

interface Extent {
  offset: number;
  length: number;
}

/** Where each item's data lies: its first extents, as many as hold descriptorBytes, from an iloc box. */
function* locations(file: Uint8Array, iloc: Box): Generator<{ item: number; method: number; extents: Extent[] }> {
  const at = new Reader(file, iloc.start, iloc.end);
  const version = at.u8();
  at.skip(3);
  const sizes = at.u8();
  const more = at.u8();
  const [offsetSize, lengthSize, baseOffsetSize] = [sizes >> 4, sizes & 15, more >> 4];
  const indexSize = version === 1 || version === 2 ? more & 15 : 0;
  const uint = (size: number): number => {
    if (size === 0) return 0;
    if (size === 4) return at.u32();
    if (size === 8) return at.u32() * 2 ** 32 + at.u32();
    throw new MalformedBox();
  };
  const count = version < 2 ? at.u16() : at.u32();
  if (count > maxWalkedBoxes) throw new TooManyBoxes();
  for (let items = count; items > 0; items--) {
    const item = version < 2 ? at.u16() : at.u32();
    const method = version === 1 || version === 2 ? at.u16() & 15 : 0;
    at.skip(2); // data reference index
    const base = uint(baseOffsetSize);
    const extents: Extent[] = [];
    let held = 0;
    for (let count = at.u16(); count > 0; count--) {
      uint(indexSize);
      const extent = { offset: base + uint(offsetSize), length: uint(lengthSize) };
      if (held < descriptorBytes) extents.push(extent);
      held += extent.length === 0 ? Infinity : extent.length;
    }
    if (extents.length > 0) yield { item, method, extents };
  }
}

/** The output size in a grid's or overlay's descriptor (ISO/IEC 23008-12): 16-bit fields, or 32-bit where flag 1 is set. */
function canvasOf(at: Reader, type: string): Canvas {
  at.u8(); // version
  const wide = (at.u8() & 1) === 1;
  at.skip(type === 'grid' ? 2 : 8); // rows and columns less one; or the canvas fill colour
  const field = (): number => (wide ? at.u32() : at.u16());
  return { width: field(), height: field() };
}
