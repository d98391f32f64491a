// A minimal HEIC file: the HEIF boxes that declare one HEVC-coded (hvc1) image of a given size, with
// a token of coded data. Enough for a header reader to see an HEVC image; no decoder could show it.

import { box, fullBox, latin1, singleImageFile, u32 } from './iso-box-writer.ts';

export function heicClaiming(width: number, height: number): Buffer {
  const coded = Buffer.concat([u32(4), Buffer.from([0x26, 0x01, 0xaf, 0x00])]);
  const ftyp = box('ftyp', latin1('heic'), u32(0), latin1('mif1'), latin1('heic'));
  // HEVC decoder configuration: version 1, Main profile, level 3.0, no parameter-set arrays.
  const hvcC = box('hvcC', Buffer.from([1, 0x01, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x5a, 0xf0, 0x00, 0xfc, 0xfd, 0xf8, 0xf8, 0, 0, 0x0f, 0]));
  const ispe = fullBox('ispe', 0, u32(width), u32(height));
  return singleImageFile(ftyp, 'hvc1', [{ box: hvcC, essential: true }, { box: ispe, essential: false }], coded);
}
