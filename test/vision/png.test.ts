// PNG cutouts composed and compressed band by band in the pool's threads, then put together into
// one file: the pixels must come back exactly, and the file must hold up to a strict reader (every
// chunk's CRC, the zlib stream's Adler-32) and not only to a lenient one.
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { composeBand, type Band } from '../../src/vision/compose.ts';
import { bandLayout, composeCutout, composeOrder, compressBands } from '../../src/vision/cutout-bands.ts';
import type { DecodedImage } from '../../src/vision/decode.ts';
import { kernelsWith } from '../../src/vision/kernels.ts';
import type { Matte } from '../../src/vision/matte.ts';
import { adler32Combine, assemblePng } from '../../src/vision/png-file.ts';
import { alphaCurve } from '../../src/vision/recipe.ts';
import { heapPlanes, sharedPlanes, type PlaneSet } from '../../src/vision/shared-planes.ts';

const field = (n: number, f: (i: number) => number): Float32Array => Float32Array.from({ length: n }, (_, i) => f(i));
const planes3 = (n: number, f: (i: number, c: number) => number) => [0, 1, 2].map((c) => field(n, (i) => f(i, c))) as [Float32Array, Float32Array, Float32Array];

/** A photo with a matte of guided coefficients at 1/`cellScale` of its size and colour fields at half that. */
function scene(width: number, height: number, channels: 3 | 4, cellScale = 5): { image: DecodedImage; matte: Matte } {
  const cw = Math.round(width / cellScale), ch = Math.round(height / cellScale), fw = Math.round(cw / 2), fh = Math.round(ch / 2);
  const pixels = Buffer.from(Uint8Array.from({ length: width * height * channels }, (_, i) => (channels === 4 && i % 4 === 3 ? (i % 7 === 3 ? 0 : 200) : (i * 101 + (i >> 9) * 7) % 256)));
  const matte: Matte = {
    alpha: {
      kind: 'guided',
      coefficients: {
        a: planes3(cw * ch, (i, c) => Math.sin(i * (0.3 + c)) * 2),
        // Clear on the left, opaque on the right, the colour deciding in between and along a wave.
        b: field(cw * ch, (i) => ((i % cw) + 3 * Math.sin(Math.floor(i / cw) / 4) < cw / 3 ? -3 : (i % cw) > (2 * cw) / 3 ? 3 : 0.4 + Math.sin(i) * 0.3)),
        width: cw,
        height: ch,
      },
      curve: alphaCurve(2),
    },
    colours: { foreground: planes3(fw * fh, (i, c) => ((i + c) % 5) / 5), background: planes3(fw * fh, (i, c) => ((i * 3 + c) % 4) / 4), width: fw, height: fh },
  };
  return { image: { pixels, width, height, channels }, matte };
}

/** The RGBA the composer makes in one call over the whole image, with whole planes. */
function composedWhole({ image, matte }: { image: DecodedImage; matte: Matte }): Uint8Array {
  const out = new Uint8Array(image.width * image.height * 4);
  composeBand({ ...image, from: 0, to: image.height, matte, target: { kind: 'rgba', out } });
  return out;
}

interface Chunk {
  type: string;
  data: Buffer;
  crc: number;
}

/** The chunks of a PNG file, or of a run of chunks with `from` 0. */
function chunksOf(png: Buffer, from = 8): Chunk[] {
  if (from === 8) assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  const chunks: Chunk[] = [];
  for (let at = from; at < png.length; ) {
    const length = png.readUInt32BE(at);
    chunks.push({ type: png.toString('latin1', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length), crc: png.readUInt32BE(at + 8 + length) });
    at += 12 + length;
  }
  return chunks;
}

/** Undoes the scanlines' filters (None and Up are all the encoder writes) into RGBA rows. */
function unfilter(scanlines: Buffer, width: number, height: number): { rgba: Uint8Array; filters: number[] } {
  const rowBytes = width * 4;
  const rgba = new Uint8Array(rowBytes * height);
  const filters: number[] = [];
  for (let y = 0; y < height; y++) {
    const line = scanlines.subarray(y * (rowBytes + 1), (y + 1) * (rowBytes + 1));
    filters.push(line[0]!);
    assert.ok(line[0] === 0 || (line[0] === 2 && y > 0), `row ${y} has filter ${line[0]}`);
    for (let x = 0; x < rowBytes; x++) rgba[y * rowBytes + x] = (line[1 + x]! + (line[0] === 2 ? rgba[(y - 1) * rowBytes + x]! : 0)) & 255;
  }
  return { rgba, filters };
}

/** zlib's own Adler-32 of some bytes: the last four bytes of its zlib stream. */
const zlibAdler = (bytes: Uint8Array): number => {
  const stream = zlib.deflateSync(bytes, { level: 0 });
  return stream.readUInt32BE(stream.length - 4);
};

describe('PNG cutouts compressed in bands', () => {
  // Odd widths, so that rows are no multiple of 16 bytes; the working size at a fifth of the photo's,
  // or the same (a small photo); bands whose blocks are counted in full, and wide enough that they
  // are packed as they are scanned (png-deflate.ts, blockSampling).
  for (const [width, height, channels, cellScale] of [[301, 703, 3, 5], [301, 703, 4, 5], [203, 300, 3, 1], [1501, 703, 3, 5]] as const) {
    it(`decode to exactly the RGBA the composer makes over the whole image, band boundaries and all (${width}×${height}, ${channels} channels, working size 1/${cellScale})`, async () => {
      const made = scene(width, height, channels, cellScale);
      const png = assemblePng(width, height, await compressBands(made.image, made.matte, sharedPlanes()));
      const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      assert.deepEqual([info.width, info.height, info.channels], [width, height, 4]);
      const whole = composedWhole(made);
      assert.ok(data.equals(whole), 'pixels differ from the whole-image composition');
      // The RGBA path through the same bands agrees too (WebP is encoded from it), and so do the
      // bench's comparisons: every block counted in full, and the bands deflated by zlib.
      assert.ok((await composeCutout(made.image, made.matte, sharedPlanes())).equals(whole));
      for (const deflater of ['counted', 'zlib'] as const) {
        const other = assemblePng(width, height, await compressBands(made.image, made.matte, sharedPlanes(), deflater));
        assert.ok((await sharp(other).raw().toBuffer()).equals(whole), `the bands deflated as '${deflater}' differ`);
      }
      let partial = 0;
      for (let i = 3; i < whole.length; i += 4) if (whole[i]! > 0 && whole[i]! < 255) partial++;
      assert.ok(partial > 500, `the cutout has partly transparent pixels (${partial})`);
    });
  }

  it('is a well-formed file: IHDR for 8-bit RGBA, IDAT chunks with valid CRCs, one zlib stream whose checksum holds, then IEND', async () => {
    const made = scene(257, 400, 3);
    const png = assemblePng(257, 400, await compressBands(made.image, made.matte, sharedPlanes()));
    const chunks = chunksOf(png);
    for (const chunk of chunks) assert.equal(chunk.crc, zlib.crc32(Buffer.concat([Buffer.from(chunk.type, 'latin1'), chunk.data])), `CRC of ${chunk.type}`);
    assert.deepEqual([chunks[0]!.type, chunks.at(-1)!.type], ['IHDR', 'IEND']);
    assert.ok(chunks.slice(1, -1).every((c) => c.type === 'IDAT'));
    const header = chunks[0]!.data;
    assert.deepEqual([header.readUInt32BE(0), header.readUInt32BE(4), ...header.subarray(8)], [257, 400, 8, 6, 0, 0, 0]);
    // inflateSync checks the stream's Adler-32 and fails on a wrong one.
    const scanlines = zlib.inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
    assert.equal(scanlines.length, 400 * (1 + 257 * 4));
    const { rgba, filters } = unfilter(scanlines, 257, 400);
    assert.ok(Buffer.from(rgba).equals(composedWhole(made)));
    // Each band starts unfiltered (the row above is another thread's); every other row is filtered Up.
    assert.equal(filters[0], 0);
    assert.ok(filters.filter((f) => f === 2).length >= 400 - 8, `rows filtered Up: ${filters.filter((f) => f === 2).length}`);
  });

  it("takes the photo's rows into the task's shared set, where the threads read them, and copies them band by band where the set has no room", async () => {
    const made = scene(301, 703, 3, 5);
    const set = sharedPlanes();
    const taken: number[] = [];
    const recorded: PlaneSet = { plane: (length) => set.plane(length), bytes: (length) => (taken.push(length), set.bytes(length)), release: () => set.release() };
    const png = assemblePng(301, 703, await compressBands(made.image, made.matte, recorded));
    assert.deepEqual(taken, [made.image.pixels.length], 'one stretch of shared bytes, the size of the photo');
    const whole = composedWhole(made);
    assert.ok((await sharp(png).raw().toBuffer()).equals(whole));
    set.release();
    // heapPlanes hands out no shared rows at all: the bands take copies, and the RGBA comes back band by band.
    assert.ok((await sharp(assemblePng(301, 703, await compressBands(made.image, made.matte, heapPlanes))).raw().toBuffer()).equals(whole));
    assert.ok((await composeCutout(made.image, made.matte, heapPlanes)).equals(whole));
  });

  it('reads rows already in shared memory where they are, taking from the set only the RGBA it writes there', async () => {
    const made = scene(203, 300, 4, 1);
    const pixels = Buffer.from(new SharedArrayBuffer(made.image.pixels.length));
    pixels.set(made.image.pixels);
    const taken: number[] = [];
    const set = sharedPlanes();
    const recorded: PlaneSet = { plane: (length) => set.plane(length), bytes: (length) => (taken.push(length), set.bytes(length)), release: () => set.release() };
    const rgba = await composeCutout({ ...made.image, pixels }, made.matte, recorded);
    assert.deepEqual(taken, [203 * 300 * 4]);
    assert.ok(rgba.buffer instanceof SharedArrayBuffer);
    assert.ok(rgba.equals(composedWhole(made)));
    set.release();
  });

  it('gives the same scanlines whether a band is compressed in one chunk or a row at a time', () => {
    const made = scene(123, 90, 4);
    const compress = (chunkBytes: number): Buffer => {
      const band: Band = { ...made.image, from: 10, to: 70, pixels: made.image.pixels.subarray(10 * 123 * 4, 70 * 123 * 4), matte: made.matte, target: { kind: 'png' } };
      const result = composeBand(band, chunkBytes);
      assert.equal(result.kind, 'png');
      if (result.kind !== 'png') return Buffer.alloc(0);
      // The band's deflate data is not final: an empty final block (as the file adds) ends it.
      const raw = Buffer.concat([...chunksOf(Buffer.from(result.png.chunks), 0).map((c) => c.data), Buffer.of(0x03, 0x00)]);
      const scanlines = zlib.inflateRawSync(raw);
      assert.equal(result.png.adler, zlibAdler(scanlines), 'the band reports its own Adler-32');
      assert.equal(result.png.length, scanlines.length);
      return scanlines;
    };
    const oneChunk = compress(1 << 22);
    const rowByRow = compress(1);
    assert.equal(oneChunk.length, 60 * (1 + 123 * 4));
    assert.ok(rowByRow.equals(oneChunk), 'chunked scanlines differ');
  });
});

describe('the bands an image is cut into', () => {
  it('cover every row once with no empty band, on any number of threads', () => {
    for (const threads of [1, 2, 3, 16, 17, 64]) {
      for (const height of [1, 63, 64, 129, 703, 3091, 4200, 8660]) {
        const { rows, count } = bandLayout(height, threads);
        assert.ok(rows >= 1 && count >= 1);
        assert.ok((count - 1) * rows < height && count * rows >= height, `${height} rows on ${threads} threads: ${count} bands of ${rows}`);
        assert.ok(count <= Math.max(1, threads * 4), `no more than four bands per thread (${count})`);
      }
    }
  });
});

describe('the order bands are composed in', () => {
  it('takes the bands with most of the subject first and the clear ones last, each band once', () => {
    // 100 working rows: clear at the top, the subject filling more of each row further down.
    const visibleRows = Float32Array.from({ length: 100 }, (_, y) => (y < 40 ? 0 : (y - 40) / 60));
    const order = composeOrder(100, 8, 790, visibleRows);
    assert.deepEqual([...order].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(order.slice(0, 5), [7, 6, 5, 4, 3], 'the bands of the subject first, the most visible first');
    assert.deepEqual(order.slice(-3), [0, 1, 2], 'the clear bands last, top to bottom');
  });

  it('puts the bottom band first when the subject is there, though its end maps a rounding error past the working rows', () => {
    // The bench's 12 MP photo: 3091 rows, 495 at the working size; 3091 · (495 / 3091) > 495.
    const height = 3091;
    const visibleRows = Float32Array.from({ length: 495 }, (_, y) => (y >= 460 ? 1 : 0));
    const { rows, count } = bandLayout(height, 2);
    const order = composeOrder(rows, count, height, visibleRows);
    assert.deepEqual([...order].sort((a, b) => a - b), Array.from({ length: count }, (_, i) => i));
    assert.equal(order[0], count - 1, `the bottom band first, not ${order[0]}`);
  });
});

describe('a cutout whose bands fail', () => {
  it('rejects with the band thread\'s error, and the bands queued behind the failing one leave no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      // So wide that no band thread can lay out even one row in its memory: every band fails there,
      // with several queued on each thread. Its rows (a few bytes stand for them) are already in shared
      // memory, so the bands take them as they are instead of copying them.
      const width = 250_000_000, height = 640;
      const image: DecodedImage = { pixels: Buffer.from(new SharedArrayBuffer(16)), width, height, channels: 3 };
      assert.ok(bandLayout(height, 2).count > 4);
      await assert.rejects(compressBands(image, { alpha: { kind: 'bytes', data: new Uint8Array(new SharedArrayBuffer(16)) }, colours: null }, sharedPlanes()), /memory/i);
      // The threads answer in order: once a good cutout is through, every band queued before it has been answered.
      const good: DecodedImage = { pixels: Buffer.alloc(300 * 640 * 3, 90), width: 300, height: 640, channels: 3 };
      const png = assemblePng(300, 640, await compressBands(good, { alpha: { kind: 'bytes', data: new Uint8Array(300 * 640).fill(255) }, colours: null }, sharedPlanes()));
      assert.equal((await sharp(png).metadata()).width, 300);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});

describe('the checksums the bands combine', () => {
  it("the kernel's Adler-32 equals zlib's for any length, and continues from a given value", () => {
    const { kernels, memory } = kernelsWith(1 << 20);
    const bytes = new Uint8Array(memory, 0, 300_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
    bytes.fill(255, 100_000, 170_000); // long runs of the largest byte push the sums hardest
    for (const length of [0, 1, 15, 16, 17, 4095, 4096, 4097, 65_536, 196_570, 300_000]) {
      assert.equal(kernels.adler32(0, length, 1) >>> 0, zlibAdler(bytes.subarray(0, length)), `length ${length}`);
    }
    const first = kernels.adler32(0, 123_457, 1) >>> 0;
    assert.equal(kernels.adler32(123_457, 300_000 - 123_457, first) >>> 0, zlibAdler(bytes));
  });

  it('combining two runs’ Adler-32 gives that of the runs one after the other', () => {
    const bytes = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7 + (i >> 8)) % 251);
    for (const split of [0, 1, 65_521, 65_522, 131_042, 199_999, 200_000]) {
      const a = bytes.subarray(0, split), b = bytes.subarray(split);
      assert.equal(adler32Combine(zlibAdler(a), zlibAdler(b), b.length), zlibAdler(bytes), `split at ${split}`);
    }
  });
});
