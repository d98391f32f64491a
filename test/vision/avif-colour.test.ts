// AVIFs whose colours are described only by an nclx box (no ICC profile), with the real model for the cutout.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { primaryNclx } from '../../src/vision/avif-colour.ts';
import { readHeader } from '../../src/vision/decode.ts';
import { openPhoto } from '../../src/vision/photo.ts';
import { loadSegmenter, removeBackground, type Segmenter } from '../../src/vision/remove-background.ts';
import { fixture, fixturePhoto, groundTruth, iou } from '../support/fixtures.ts';
import { defaults } from './cutout.ts';

/** Linear-light matrices to BT.709/sRGB primaries: SMPTE EG 432-1 for Display P3, ITU-R BT.2087 for BT.2020. */
const toSrgb: Record<number, number[][]> = {
  12: [
    [1.2249, -0.2247, 0],
    [-0.042, 1.0419, 0],
    [-0.0197, -0.0786, 1.0979],
  ],
  9: [
    [1.6605, -0.5876, -0.0728],
    [-0.1246, 1.1329, -0.0083],
    [-0.0182, -0.1006, 1.1187],
  ],
};

const linear = (v: number): number => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
const encoded = (v: number): number => (v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055);

/** 8-bit samples in the given primaries (sRGB curve) as 8-bit sRGB, out-of-gamut colours clipped. */
function exactSrgb(samples: Buffer, primaries: number): Buffer {
  const m = toSrgb[primaries]!;
  const out = Buffer.alloc(samples.length);
  for (let i = 0; i < samples.length; i += 3) {
    const rgb = [0, 1, 2].map((c) => linear(samples[i + c]! / 255));
    for (let c = 0; c < 3; c++) {
      const mixed = Math.min(1, Math.max(0, m[c]![0]! * rgb[0]! + m[c]![1]! * rgb[1]! + m[c]![2]! * rgb[2]!));
      out[i + c] = Math.round(encoded(mixed) * 255);
    }
  }
  return out;
}

/** Every colour of a 6-level cube and a few photo-like ones, one per pixel, 21×11. */
function colourChart(): { samples: Buffer; width: number; height: number } {
  const levels = [0, 51, 102, 153, 204, 255];
  const colours = levels.flatMap((r) => levels.flatMap((g) => levels.map((b) => [r, g, b])));
  colours.push([180, 120, 90], [90, 140, 200], [230, 200, 170]);
  while (colours.length < 21 * 11) colours.push([128, 128, 128]);
  return { samples: Buffer.from(colours.flat()), width: 21, height: 11 };
}

/**
 * A lossless AVIF of the samples (sharp writes an nclx box for it: BT.709 primaries, sRGB transfer,
 * identity matrix, so the decoded samples are the stored ones), its primaries and transfer patched in place.
 */
async function avif(raw: { samples: Buffer; width: number; height: number }, nclx: { primaries: number; transfer?: number }): Promise<Buffer> {
  const file = await sharp(raw.samples, { raw: { width: raw.width, height: raw.height, channels: 3 } }).avif({ lossless: true }).toBuffer();
  const at = file.indexOf('colrnclx');
  assert.ok(at > 0, 'sharp wrote no nclx box');
  file.writeUInt16BE(nclx.primaries, at + 8);
  if (nclx.transfer !== undefined) file.writeUInt16BE(nclx.transfer, at + 10);
  return file;
}

async function decoded(input: Buffer): Promise<Buffer> {
  return (await (await openPhoto(input, await readHeader(input, defaults.maxPixels), defaults.maxPixels)).decoded).pixels;
}

function worstDifference(a: Buffer, b: Buffer): number {
  assert.equal(a.length, b.length);
  return Math.max(...a.map((value, i) => Math.abs(value - b[i]!)));
}

describe('AVIF nclx colours', () => {
  const chart = colourChart();

  for (const [primaries, name] of [[12, 'Display P3'], [9, 'BT.2020']] as const) {
    it(`decodes an AVIF marked ${name} (no ICC profile) to its sRGB colours`, async () => {
      const pixels = await decoded(await avif(chart, { primaries }));
      const expected = exactSrgb(chart.samples, primaries);
      const worst = worstDifference(pixels, expected);
      assert.ok(worst <= 3, `${worst} levels off the exact conversion; (180,120,90) became (${[...pixels.subarray(216 * 3, 217 * 3)].join(',')}), exactly (${[...expected.subarray(216 * 3, 217 * 3)].join(',')})`);
    });
  }

  it('leaves an AVIF marked sRGB (BT.709 primaries) exactly as stored', async () => {
    const input = await avif(chart, { primaries: 1 });
    assert.equal((await readHeader(input, defaults.maxPixels)).widePrimaries, undefined);
    assert.deepEqual(await decoded(input), chart.samples);
  });

  for (const [transfer, name] of [[16, 'PQ'], [18, 'HLG']] as const) {
    it(`leaves a BT.2020 AVIF with the HDR ${name} transfer as stored (read as sRGB)`, async () => {
      assert.deepEqual(await decoded(await avif(chart, { primaries: 9, transfer })), chart.samples);
    });
  }

  it('reads the nclx box of an AVIF with a 64-bit box size and a box running to the end of the file', async () => {
    const file = await avif(chart, { primaries: 12 });
    const meta = file.indexOf('meta') - 4;
    const large = Buffer.alloc(16);
    large.writeUInt32BE(1, 0);
    large.write('meta', 4, 'latin1');
    large.writeUInt32BE(file.readUInt32BE(meta) + 8, 12);
    const rewritten = Buffer.concat([file.subarray(0, meta), large, file.subarray(meta + 8)]);
    rewritten.writeUInt32BE(0, rewritten.indexOf('mdat') - 4);
    assert.equal(primaryNclx(rewritten)?.colourPrimaries, 12);
  });

  it('converts an AVIF with stray bytes after its last box, which libheif decodes', async () => {
    const input = Buffer.concat([await avif(chart, { primaries: 12 }), Buffer.from('\n')]);
    assert.equal((await readHeader(input, defaults.maxPixels)).widePrimaries, 12);
    assert.ok(worstDifference(await decoded(input), exactSrgb(chart.samples, 12)) <= 3);
  });

  it('reads the nclx box of an AVIF followed by 25 MB of empty boxes without listing them (64 MB of heap)', async () => {
    // In a process of its own, whose heap limit is what is tested: listing them took some 340 MB.
    const code = `
      const { primaryNclx } = await import(${JSON.stringify(path.resolve(import.meta.dirname, '../../src/vision/avif-colour.ts'))});
      const file = Buffer.from(process.argv[1], 'base64');
      const empty = Buffer.alloc(25e6);
      for (let at = 0; at < empty.length; at += 8) empty.write('\\0\\0\\0\\x08free', at, 'latin1');
      process.stdout.write(String(primaryNclx(Buffer.concat([file, empty]))?.colourPrimaries));
    `;
    const file = await avif(chart, { primaries: 12 });
    const args = ['--max-old-space-size=64', '--import', 'tsx', '--input-type=module', '--eval', code, file.toString('base64')];
    const { stdout } = await promisify(execFile)(process.execPath, args);
    assert.equal(stdout, '12');
  });

  it('looks for the meta box among the first 100 boxes only, as libheif does within a box', async () => {
    const file = await avif(chart, { primaries: 12 });
    const ftyp = file.readUInt32BE(0);
    const withEmptyBoxes = (count: number) => {
      const empty = Buffer.alloc(8 * count);
      for (let at = 0; at < empty.length; at += 8) empty.write('\0\0\0\x08free', at, 'latin1');
      return Buffer.concat([file.subarray(0, ftyp), empty, file.subarray(ftyp)]);
    };
    assert.equal(primaryNclx(withEmptyBoxes(98))?.colourPrimaries, 12, 'meta as the 100th box');
    assert.equal(primaryNclx(withEmptyBoxes(99)), undefined, 'meta as the 101st box');
  });

  it('finds no nclx box, without throwing, in truncated or garbled box structures', async () => {
    const file = await avif(chart, { primaries: 12 });
    for (let length = 0; length < file.indexOf('mdat'); length++) {
      assert.doesNotThrow(() => primaryNclx(file.subarray(0, length)), `truncated to ${length} bytes`);
    }
    // Every box's size (and every other 4-byte field) set to values that overrun, undercut or mark a 64-bit size.
    for (let at = 0; at + 4 <= file.indexOf('mdat'); at++) {
      for (const size of [0, 1, 7, 8, 9, 0x7fffffff, 0xffffffff]) {
        const garbled = Buffer.from(file);
        garbled.writeUInt32BE(size, at);
        assert.doesNotThrow(() => primaryNclx(garbled), `size ${size} at ${at}`);
      }
    }
    assert.equal(primaryNclx(Buffer.from('not an image at all')), undefined);
  });
});

describe('AVIF nclx colours, cut out', () => {
  let segmenter: Segmenter;
  before(async () => {
    segmenter = await loadSegmenter({ threads: 2 });
  });

  it('cuts out a Display P3 AVIF in its sRGB colours', async () => {
    const name = 'am-gt02';
    const { data: samples, info } = await sharp(fixturePhoto(name)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const input = await avif({ samples, width: info.width, height: info.height }, { primaries: 12 });
    const { data, info: cutoutInfo } = await sharp((await removeBackground(segmenter, input, defaults)).data).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([cutoutInfo.width, cutoutInfo.height, cutoutInfo.channels], [fixture(name).width, fixture(name).height, 4]);
    const alpha = Buffer.from(data.filter((_, i) => i % 4 === 3));
    const score = iou(alpha, await groundTruth(name));
    assert.ok(score >= 0.8, `IoU ${score.toFixed(3)} < 0.8`);
    // Where the cutout is opaque, its colours are the photo's, converted from Display P3.
    const expected = exactSrgb(samples, 12);
    let [total, count] = [0, 0];
    for (let pixel = 0; pixel < alpha.length; pixel++) {
      if (alpha[pixel] !== 255) continue;
      for (let c = 0; c < 3; c++) total += Math.abs(data[pixel * 4 + c]! - expected[pixel * 3 + c]!);
      count += 3;
    }
    assert.ok(count > 0 && total / count < 1.5, `opaque pixels are ${(total / count).toFixed(2)} levels off the photo's sRGB colours on average`);
  });
});
