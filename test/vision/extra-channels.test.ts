// TIFFs with channels beyond their colours and one alpha, as Photoshop saves selections and spot
// colours: the pipeline takes colour and alpha only, so it says what it cannot take.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaskError } from '../../src/domain/errors.ts';
import { readHeader } from '../../src/vision/decode.ts';
import { decodesFully } from '../../src/web/decodes-fully.ts';
import { tiffOf } from '../support/tiff.ts';

const maxPixels = 1_000_000;

describe('TIFF extra channels', () => {
  it('refuses RGB with alpha and an extra channel as unsupported_image from the header, saying so, though it decodes', async () => {
    const tiff = tiffOf({ width: 8, height: 8, channels: 5, bits: 8, format: 'uint', samples: new Uint8Array(8 * 8 * 5).fill(180), extraSamples: [2, 0] });
    // The web upload's check alone would take it, and the task fail later.
    assert.equal(await decodesFully(tiff, maxPixels), true);
    await assert.rejects(readHeader(tiff, maxPixels), (err) => {
      assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
      assert.equal(err.code, 'unsupported_image');
      assert.match(err.message, /^TIFF images with channels beyond colour and alpha are not supported \(this RGB one has 5, where 4 hold colour and alpha\)/);
      return true;
    });
  });

  it('takes grey with alpha, RGB with alpha and CMYK with alpha', async () => {
    for (const [channels, cmyk] of [[2, false], [4, false], [5, true]] as const) {
      const tiff = tiffOf({ width: 8, height: 8, channels, bits: 8, format: 'uint', samples: new Uint8Array(8 * 8 * channels).fill(90), cmyk });
      assert.deepEqual(await readHeader(tiff, maxPixels).then((h) => [h.width, h.height]), [8, 8]);
    }
  });
});
