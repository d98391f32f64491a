import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fixture, fixturePhoto, fixturesDir } from '../support/fixtures.ts';
import { runCli } from '../support/cli.ts';

describe('cutout remove on local files', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-remove-'));
    fs.writeFileSync(path.join(dir, 'broken.jpg'), Buffer.from('this is not a photo'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('writes one cutout per file at the source size, shows progress, and reports the file that failed', async () => {
    const photos = ['am-gt07', 'davis-car-shadow-00016'].map((name) => path.join(fixturesDir, fixture(name).image));
    const outDir = path.join(dir, 'out');
    const run = await runCli(['remove', ...photos, path.join(dir, 'broken.jpg'), '--out-dir', outDir, '--format', 'webp'], { CUTOUT_DATA_DIR: dir });

    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /\[1\/3\] .*am-gt07\.png → .*am-gt07\.webp 800×618/);
    assert.match(run.stderr, /\[2\/3\] .*davis-car-shadow-00016\.jpg → /);
    assert.match(run.stderr, /\[3\/3\] .*broken\.jpg failed: unsupported_image/);
    assert.match(run.stderr, /1 of 3 files failed/);

    for (const name of ['am-gt07', 'davis-car-shadow-00016']) {
      const source = await sharp(fixturePhoto(name)).metadata();
      const meta = await sharp(path.join(outDir, `${name}.webp`)).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height, meta.hasAlpha], ['webp', source.width, source.height, true]);
    }
    assert.deepEqual(fs.readdirSync(outDir).sort(), ['am-gt07.webp', 'davis-car-shadow-00016.webp']);
  });

  test('two files that share a name are refused before any work, so neither cutout overwrites the other', async () => {
    for (const name of ['a/photo.jpg', 'b/photo.jpg', 'Photo.png']) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), fixturePhoto('am-gt07'));
    }
    const outDir = path.join(dir, 'shared-out');
    const run = await runCli(['remove', path.join(dir, 'a/photo.jpg'), path.join(dir, 'b/photo.jpg'), path.join(dir, 'Photo.png'), '--out-dir', outDir], { CUTOUT_DATA_DIR: dir });

    assert.equal(run.code, 2, run.stderr);
    assert.ok(run.stderr.includes(`${path.join(dir, 'a/photo.jpg')} and ${path.join(dir, 'b/photo.jpg')} and ${path.join(dir, 'Photo.png')} would each be written to ${path.join(outDir, 'photo.png')}`), run.stderr);
    assert.equal(fs.existsSync(outDir), false);
  });

  /** Runs remove on a photo in a folder of its own, with the --out-dir `outDirFor` gives; the photo must come back refused and unchanged. */
  async function refusedOverItsOwnPhoto(name: string, outDirFor: (own: string) => string): Promise<void> {
    const own = path.join(dir, name);
    fs.mkdirSync(own);
    const photo = path.join(own, 'keep.png');
    const original = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c33' } }).png().toBuffer();
    fs.writeFileSync(photo, original);
    const run = await runCli(['remove', photo, '--out-dir', outDirFor(own)], { CUTOUT_DATA_DIR: dir });

    assert.equal(run.code, 2, run.stderr);
    assert.ok(run.stderr.includes(`${photo} would be written over by its own cutout`), run.stderr);
    assert.ok(fs.readFileSync(photo).equals(original), 'the photo is unchanged');
  }

  test('a file whose cutout would be written over it (its own folder as --out-dir, its own format) is refused before any work, and the photo is kept', async () => {
    await refusedOverItsOwnPhoto('own', (own) => own);
  });

  test('a file whose cutout would be written over it through a linked folder (--out-dir a symbolic link to its own folder) is refused, and the photo is kept', async () => {
    await refusedOverItsOwnPhoto('linked-own', (own) => {
      const linked = path.join(dir, 'linked-out');
      fs.symlinkSync(own, linked, 'dir');
      return linked;
    });
  });

  test('without --out-dir it refuses with a message and exit code 2', async () => {
    const run = await runCli(['remove', 'photo.jpg'], { CUTOUT_DATA_DIR: dir });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /out-dir/);
  });
});
