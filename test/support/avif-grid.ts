// AVIF files put together around one coded image made by sharp: a grid that references it for every
// cell, or the image cropped by a clean aperture (clap) property.

import { box, fullBox, latin1, singleImageFile, u16, u32 } from './iso-box-writer.ts';

/** The body of the box of `type` that `file` (a flat run of boxes, searched by name) holds first, with its header. */
function boxOf(file: Buffer, type: string): Buffer {
  const at = file.indexOf(latin1(type)) - 4;
  return file.subarray(at, at + file.readUInt32BE(at));
}

/**
 * `tile` is an AVIF of one colour image made by sharp (no alpha): its av1C property and coded data
 * are reused. The grid's descriptor, stored in an idat box, says `cells × tileSide` a side.
 * `splitAround`: the descriptor stored in two extents, its sizes in the second, with that many
 * pixels a side written between them, where a reader of the first extent alone finds them.
 */
export function avifGrid(tile: Buffer, tileSide: number, cells: number, declared: number, { freeBoxes = 0, textItems = 0, splitAround = 0 } = {}): Buffer {
  const av1C = boxOf(tile, 'av1C');
  const coded = boxOf(tile, 'mdat').subarray(8);
  const head = Buffer.from([0, 0, cells - 1, cells - 1]);
  const sizes = Buffer.concat([u16(cells * tileSide), u16(cells * tileSide)]);
  const grid = splitAround ? Buffer.concat([head, u16(splitAround), u16(splitAround), sizes]) : Buffer.concat([head, sizes]);
  const gridExtents = splitAround ? [u16(2), u32(0), u32(4), u32(8), u32(4)] : [u16(1), u32(0), u32(grid.length)];
  const ftyp = box('ftyp', latin1('avif'), u32(0), latin1('mif1'), latin1('avif'), latin1('miaf'));
  const free = Buffer.concat(Array.from({ length: freeBoxes }, () => box('free')));
  // Items of one byte of text each (ids from 10), listed before the image items, their data in idat.
  const texts = Array.from({ length: textItems }, (_, i) => 10 + i);
  const meta = (tileOffset: number): Buffer =>
    fullBox(
      'meta',
      0,
      fullBox('hdlr', 0, u32(0), latin1('pict'), Buffer.alloc(12), Buffer.from([0])),
      fullBox('pitm', 0, u16(2)),
      // Version 1 (construction methods), 4-byte offsets and lengths: the tile in the file, the grid in idat.
      fullBox(
        'iloc',
        1,
        Buffer.from([0x44, 0x00]),
        u16(2 + texts.length),
        ...texts.map((id) => Buffer.concat([u16(id), u16(1), u16(0), u16(1), u32(0), u32(1)])),
        ...[u16(1), u16(0), u16(0), u16(1), u32(tileOffset), u32(coded.length), u16(2), u16(1), u16(0), ...gridExtents],
      ),
      fullBox(
        'iinf',
        0,
        u16(2 + texts.length),
        ...texts.map((id) => fullBox('infe', 2, u16(id), u16(0), latin1('mime'), Buffer.from([0]), latin1('text/plain\0'))),
        fullBox('infe', 2, u16(1), u16(0), latin1('av01'), Buffer.from([0])),
        fullBox('infe', 2, u16(2), u16(0), latin1('grid'), Buffer.from([0])),
      ),
      fullBox('iref', 0, box('dimg', u16(2), u16(cells * cells), ...Array.from({ length: cells * cells }, () => u16(1)))),
      box('iprp', box('ipco', av1C, fullBox('ispe', 0, u32(tileSide), u32(tileSide)), fullBox('ispe', 0, u32(declared), u32(declared))), fullBox('ipma', 0, u32(2), u16(1), Buffer.from([2, 0x81, 0x02]), u16(2), Buffer.from([1, 0x03]))),
      box('idat', grid),
    );
  // The tile's data starts after ftyp, the free boxes, meta and mdat's own 8-byte header; meta's length does not depend on the offset.
  const tileOffset = ftyp.length + free.length + meta(0).length + 8;
  return Buffer.concat([ftyp, free, meta(tileOffset), box('mdat', coded)]);
}

/** `tile` (as for avifGrid) cropped to `side`×`side` by a clap property: the coded image stays `tileSide` a side. */
export function avifCropped(tile: Buffer, tileSide: number, side: number): Buffer {
  const av1C = boxOf(tile, 'av1C');
  const coded = boxOf(tile, 'mdat').subarray(8);
  const ftyp = box('ftyp', latin1('avif'), u32(0), latin1('mif1'), latin1('avif'), latin1('miaf'));
  // Width and height, then horizontal and vertical offsets from the centre, each a fraction.
  const clap = box('clap', u32(side), u32(1), u32(side), u32(1), u32(0), u32(1), u32(0), u32(1));
  const properties = [
    { box: av1C, essential: true },
    { box: fullBox('ispe', 0, u32(tileSide), u32(tileSide)), essential: false },
    { box: clap, essential: true },
  ];
  return singleImageFile(ftyp, 'av01', properties, coded);
}
