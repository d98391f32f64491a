// AVIF sizes the header does not give: a grid's (an image made of coded tiles, its size declared
// twice, by its ispe property and by the grid), and a coded image's before its crop.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import sharp from 'sharp';
import { TaskError } from '../../src/domain/errors.ts';
import { decodeImage, readHeader } from '../../src/vision/decode.ts';
import { avifCropped, avifGrid } from '../support/avif-grid.ts';

const tileSide = 64;
let tile: Buffer;
before(async () => {
  tile = await sharp({ create: { width: tileSide, height: tileSide, channels: 3, background: '#468' } }).avif({ effort: 0 }).toBuffer();
});

describe('AVIF grids and crops', () => {
  it('decodes a grid of tiles at the size it declares, after any number of top-level boxes or other items, or in extents', async () => {
    // libheif reads an item's data as its extents joined: the sizes in a second extent are the grid's.
    for (const layout of [{}, { freeBoxes: 150 }, { textItems: 120 }, { splitAround: 10 }]) {
      const avif = avifGrid(tile, tileSide, 2, 2 * tileSide, layout);
      const header = await readHeader(avif, 1_000_000);
      assert.deepEqual([header.format, header.width, header.height], ['heif', 128, 128]);
      const image = await decodeImage(avif, 1_000_000);
      assert.deepEqual([image.width, image.height], [128, 128]);
    }
  });

  it('refuses a grid whose tiles make more pixels than the cap as image_too_large from the header, whatever its ispe says', async () => {
    // Built this way, 1024×1024 tiles in a 16×16 grid declared 50×50 took libheif 4 s and 1 GB to
    // assemble from 919 bytes before the decode failed on the sizes' difference.
    // libheif reads on past 100 top-level boxes, and takes up to 256 items: the grid is found after them.
    // Its descriptor split in two extents, with 50×50 written after the first, is read as libheif joins them.
    for (const layout of [{}, { freeBoxes: 150 }, { textItems: 120 }, { splitAround: 50 }]) {
      const avif = avifGrid(tile, tileSide, 16, 50, layout);
      assert.deepEqual(await sharp(avif).metadata().then((m) => [m.width, m.height]), [50, 50]);
      await assert.rejects(readHeader(avif, 100_000), (err) => {
        assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
        assert.equal(err.code, 'image_too_large');
        assert.match(err.message, /1024×1024 \(1,048,576 pixels\); the limit is 100,000 pixels/);
        return true;
      });
    }
  });

  it('refuses an image cropped by its clean aperture to within the cap, but coded at more pixels than the cap, as image_too_large', async () => {
    // libheif decodes the whole coded image before cropping it: 2048×2048 for a 50×50 header, built this way.
    const avif = avifCropped(tile, tileSide, 20);
    assert.deepEqual(await sharp(avif).metadata().then((m) => [m.width, m.height]), [20, 20]);
    await assert.rejects(readHeader(avif, 1000), (err) => {
      assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
      assert.equal(err.code, 'image_too_large');
      assert.match(err.message, /64×64 \(4,096 pixels\); the limit is 1,000 pixels/);
      return true;
    });
    const within = await decodeImage(avif, 10_000);
    assert.deepEqual([within.width, within.height], [20, 20]);
  });

  it('refuses a file with more top-level boxes than any photo has (a crafted upload packs millions) as unsupported_image rather than walk them all', async () => {
    // libheif reads on past them at the top level (it refuses more than 256 items itself).
    const avif = avifGrid(tile, tileSide, 2, 2 * tileSide, { freeBoxes: 5000 });
    assert.deepEqual(await sharp(avif).metadata().then((m) => [m.width, m.height]), [128, 128]);
    await assert.rejects(readHeader(avif, 1_000_000), (err) => {
      assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
      assert.equal(err.code, 'unsupported_image');
      assert.match(err.message, /more than 4096 boxes or items/);
      return true;
    });
  });
});
