// Progressive JPEGs whose scans would make a small file cost minutes of decoding.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { TaskError } from '../../src/domain/errors.ts';
import { decodeImage, readHeader } from '../../src/vision/decode.ts';
import { jpegOfScans } from '../support/jpeg-scans.ts';

const maxPixels = 50_000_000;

describe('progressive JPEG scans', () => {
  it('refuses a JPEG of thousands of scans as unsupported_image from its header, before decoding', async () => {
    // 7000×7000 in 2647 scans: 0.5 MB that took 28 s to decode, fifty times a 4 MB photo of that size.
    const jpeg = jpegOfScans(1024, 1024, 3, Infinity);
    assert.equal((await sharp(jpeg).metadata()).isProgressive, true);
    await assert.rejects(readHeader(jpeg, maxPixels), (err) => {
      assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
      assert.equal(err.code, 'unsupported_image');
      assert.match(err.message, /more than 100 scans/);
      return true;
    });
    await assert.rejects(readHeader(jpegOfScans(64, 64, 1, 101), maxPixels), /more than 100 scans/);
  });

  it('refuses it also with stray bytes before its scans, which libjpeg skips with a warning and decodes every scan before failing', async () => {
    // One byte after a segment was enough for the count to stop at 0 while the decode still took
    // its full time (2.4 s at 2048×2048, 28 s at 7000×7000) before failing on the warning.
    const jpeg = jpegOfScans(256, 256, 3, Infinity);
    const firstScan = jpeg.indexOf(Buffer.from([0xff, 0xda]));
    for (const stray of [[0x00], [0x12, 0x34, 0x56], [0xff, 0x00]]) {
      const withStray = Buffer.concat([jpeg.subarray(0, firstScan), Buffer.from(stray), jpeg.subarray(firstScan)]);
      await assert.rejects(readHeader(withStray, maxPixels), /more than 100 scans/, `stray bytes ${JSON.stringify(stray)}`);
    }
  });

  it('takes a progressive JPEG of up to 100 scans, and one as encoders write it', async () => {
    const atLimit = jpegOfScans(64, 48, 3, 100);
    const header = await readHeader(atLimit, maxPixels);
    assert.deepEqual([header.width, header.height], [64, 48]);
    assert.equal((await decodeImage(atLimit, maxPixels)).pixels.length, 64 * 48 * 3);
    const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#468' } }).jpeg({ progressive: true }).toBuffer();
    assert.deepEqual(await readHeader(photo, maxPixels).then((h) => [h.width, h.height]), [640, 480]);
  });
});
