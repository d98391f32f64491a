// A progressive JPEG's decoder passes over every block of the image once a scan, and the format
// lets a file hold thousands of scans that carry nothing but "the rest of these blocks is zero":
// 0.5 MB of them, at 7000×7000, took 28 s to decode, where a 4 MB photo of that size takes half a
// second. Encoders write about 10 scans (jpegtran and mozjpeg alike), and libtiff already stops a
// JPEG-compressed TIFF at 100 (LIBTIFF_JPEG_MAX_ALLOWED_SCAN_NUMBER): the same limit is applied to
// JPEG files from their markers, before libjpeg starts on them.

/** The most scans a JPEG may have: a decode stays within about twice that of an ordinary progressive JPEG. */
export const maxJpegScans = 100;

/** How many scans (SOS markers) the JPEG in `bytes` has before its end, counting no further than `stopAfter + 1`. */
export function jpegScans(bytes: Uint8Array, stopAfter: number): number {
  let scans = 0;
  let at = 2; // after SOI
  for (;;) {
    // libjpeg skips what is not a marker (with a warning, which fails the decode only after every
    // scan has been decoded), so the count does too: a stray byte must not end it.
    at = bytes.indexOf(0xff, at);
    if (at === -1 || at + 1 >= bytes.length) break;
    const marker = bytes[at + 1]!;
    if (marker === 0xff || marker === 0x00) {
      at += marker === 0xff ? 1 : 2; // a fill byte before the marker; a stuffed zero, which libjpeg discards
      continue;
    }
    if (marker === 0xd9) break; // EOI: what follows (an MPO's or gain map's second image) is not decoded
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2; // markers without a length
      continue;
    }
    if (at + 3 >= bytes.length) break;
    at += 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!);
    if (marker === 0xda) {
      if (++scans > stopAfter) break;
      at = afterEntropyCodedData(bytes, at);
    }
  }
  return scans;
}

/** Where the next marker starts: 0xFF followed by 0 is a data byte, and restart markers belong to the scan. */
function afterEntropyCodedData(bytes: Uint8Array, from: number): number {
  for (let at = bytes.indexOf(0xff, from); at !== -1; at = bytes.indexOf(0xff, at + 2)) {
    const next = bytes[at + 1];
    if (next !== 0x00 && !(next !== undefined && next >= 0xd0 && next <= 0xd7)) return at;
  }
  return bytes.length;
}
