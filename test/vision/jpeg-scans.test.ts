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

  it('takes a progressive JPEG of up to 100 scans, and one as encoders write it', async () => {
    const atLimit = jpegOfScans(64, 48, 3, 100);
    const header = await readHeader(atLimit, maxPixels);
    assert.deepEqual([header.width, header.height], [64, 48]);
    assert.equal((await decodeImage(atLimit, maxPixels)).pixels.length, 64 * 48 * 3);
    const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#468' } }).jpeg({ progressive: true }).toBuffer();
    assert.deepEqual(await readHeader(photo, maxPixels).then((h) => [h.width, h.height]), [640, 480]);
  });
});
