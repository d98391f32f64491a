// Writing ISO base media file format boxes (HEIF, AVIF) for tests that put such files together by hand.

export function box(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(body.length + 8);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

export function fullBox(type: string, version: number, ...parts: Buffer[]): Buffer {
  return box(type, u32(version << 24), ...parts);
}

export function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}

export function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value >>> 0);
  return b;
}

export const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');

/** A property of the one image: its box, and whether a reader must understand it to show the image. */
export interface ImageProperty {
  box: Buffer;
  essential: boolean;
}

/**
 * A HEIF file of one coded image (item 1, of `itemType`, e.g. hvc1 or av01): `ftyp`, a meta box that
 * declares the item with `properties` (associated in order), and an mdat box holding `coded`.
 */
export function singleImageFile(ftyp: Buffer, itemType: string, properties: ImageProperty[], coded: Buffer): Buffer {
  const associations = properties.map((property, i) => (property.essential ? 0x80 : 0) | (i + 1));
  const iprp = box('iprp', box('ipco', ...properties.map((property) => property.box)), fullBox('ipma', 0, u32(1), u16(1), Buffer.from([properties.length, ...associations])));
  const meta = (dataOffset: number): Buffer =>
    fullBox(
      'meta',
      0,
      fullBox('hdlr', 0, u32(0), latin1('pict'), Buffer.alloc(12), Buffer.from([0])),
      fullBox('pitm', 0, u16(1)),
      fullBox('iloc', 0, Buffer.from([0x44, 0x00]), u16(1), u16(1), u16(0), u16(1), u32(dataOffset), u32(coded.length)),
      fullBox('iinf', 0, u16(1), fullBox('infe', 2, u16(1), u16(0), latin1(itemType), Buffer.from([0]))),
      iprp,
    );
  // The item's data starts after ftyp, meta and mdat's own 8-byte header; meta's length does not depend on the offset.
  const dataOffset = ftyp.length + meta(0).length + 8;
  return Buffer.concat([ftyp, meta(dataOffset), box('mdat', coded)]);
}
