// Progressive JPEG files written byte by byte with as many scans as the format allows: every AC
// coefficient of every component in a band of its own, refined one bit at a time, each scan holding
// only end-of-band runs. A small file whose decode passes over the whole image thousands of times.

function segment(marker: number, body: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([head, body]);
}

/** Huffman-coded bits, with 0xFF bytes stuffed and the last byte padded with ones. */
class BitWriter {
  private readonly bytes: number[] = [];
  private byte = 0;
  private count = 0;

  put(value: number, length: number): void {
    for (let i = length - 1; i >= 0; i--) {
      this.byte = (this.byte << 1) | ((value >> i) & 1);
      if (++this.count === 8) this.flush();
    }
  }

  done(): Buffer {
    if (this.count > 0) this.put((1 << (8 - this.count)) - 1, 8 - this.count);
    return Buffer.from(this.bytes);
  }

  private flush(): void {
    this.bytes.push(this.byte);
    if (this.byte === 0xff) this.bytes.push(0);
    [this.byte, this.count] = [0, 0];
  }
}

function startOfScan(components: number[], start: number, end: number, high: number, low: number): Buffer {
  const body = Buffer.alloc(1 + 2 * components.length + 3);
  body[0] = components.length;
  components.forEach((id, i) => body.set([id, 0x00], 1 + 2 * i)); // both Huffman tables 0
  body.set([start, end, (high << 4) | low], 1 + 2 * components.length);
  return segment(0xda, body);
}

/**
 * A grey (1 component) or YCbCr (3) progressive JPEG of one flat colour: a DC scan, then the AC
 * scans until `scans` in all (at most 1 + 882 a component).
 */
export function jpegOfScans(width: number, height: number, components: 1 | 3, scans: number): Buffer {
  const ids = Array.from({ length: components }, (_, i) => i + 1);
  const frame = Buffer.alloc(6 + 3 * components);
  frame[0] = 8;
  frame.writeUInt16BE(height, 1);
  frame.writeUInt16BE(width, 3);
  frame[5] = components;
  ids.forEach((id, i) => frame.set([id, 0x11, 0], 6 + 3 * i)); // no subsampling, quantisation table 0
  // DC table: category 0 (no difference) as the 1-bit code 0. AC table: EOB0 to EOB14, 4 bits each.
  const dcCounts = Buffer.alloc(16);
  dcCounts[0] = 1;
  const acCounts = Buffer.alloc(16);
  acCounts[3] = 15;
  const huffman = Buffer.concat([Buffer.from([0x00]), dcCounts, Buffer.from([0]), Buffer.from([0x10]), acCounts, Buffer.from(Array.from({ length: 15 }, (_, r) => r << 4))]);
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const dc = new BitWriter();
  for (let i = 0; i < blocks * components; i++) dc.put(0, 1);
  // Every block of a band ends at once: runs of up to 32767 blocks (EOB14 and 14 more bits).
  const ac = new BitWriter();
  for (let left = blocks; left > 0; ) {
    const r = Math.min(14, Math.floor(Math.log2(left)));
    const run = Math.min(left, 2 ** (r + 1) - 1);
    ac.put(r, 4);
    ac.put(run - 2 ** r, r);
    left -= run;
  }
  const acData = ac.done();
  const parts = [Buffer.from([0xff, 0xd8]), segment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])), segment(0xc2, frame), segment(0xc4, huffman)];
  parts.push(startOfScan(ids, 0, 0, 0, 0), dc.done());
  let written = 1;
  for (const id of ids) {
    for (let k = 1; k <= 63; k++) {
      for (let low = 13; low >= 0; low--) {
        if (written++ === scans) return Buffer.concat([...parts, Buffer.from([0xff, 0xd9])]);
        parts.push(startOfScan([id], k, k, low === 13 ? 0 : low + 1, low), acData);
      }
    }
  }
  return Buffer.concat([...parts, Buffer.from([0xff, 0xd9])]);
}
