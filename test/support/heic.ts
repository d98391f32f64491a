// A minimal HEIC file: the HEIF boxes that declare one HEVC-coded (hvc1) image of a given size, with
// a token of coded data. Enough for a header reader to see an HEVC image; no decoder could show it.

import { box, fullBox, latin1, u16, u32 } from './iso-box-writer.ts';

export function heicClaiming(width: number, height: number): Buffer {
  const coded = Buffer.concat([u32(4), Buffer.from([0x26, 0x01, 0xaf, 0x00])]);
  const ftyp = box('ftyp', latin1('heic'), u32(0), latin1('mif1'), latin1('heic'));
  // HEVC decoder configuration: version 1, Main profile, level 3.0, no parameter-set arrays.
  const hvcC = box('hvcC', Buffer.from([1, 0x01, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x5a, 0xf0, 0x00, 0xfc, 0xfd, 0xf8, 0xf8, 0, 0, 0x0f, 0]));
  const ispe = fullBox('ispe', 0, u32(width), u32(height));
  const properties = box('iprp', box('ipco', hvcC, ispe), fullBox('ipma', 0, u32(1), u16(1), Buffer.from([2, 0x81, 0x02])));
  const meta = (dataOffset: number): Buffer =>
    fullBox(
      'meta',
      0,
      fullBox('hdlr', 0, u32(0), latin1('pict'), Buffer.alloc(12), Buffer.from([0])),
      fullBox('pitm', 0, u16(1)),
      fullBox('iloc', 0, Buffer.from([0x44, 0x00]), u16(1), u16(1), u16(0), u16(1), u32(dataOffset), u32(coded.length)),
      fullBox('iinf', 0, u16(1), fullBox('infe', 2, u16(1), u16(0), latin1('hvc1'), Buffer.from([0]))),
      properties,
    );
  // The item's data starts after ftyp, meta and mdat's own 8-byte header; meta's length does not depend on the offset.
  const dataOffset = ftyp.length + meta(0).length + 8;
  return Buffer.concat([ftyp, meta(dataOffset), box('mdat', coded)]);
}
