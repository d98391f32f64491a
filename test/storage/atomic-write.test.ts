// Results and uploads on disk are written under a temporary name and renamed into place.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeFileAtomically } from '../../src/storage/atomic-write.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-atomic-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('writes of one file at once all succeed, and the file holds one of them whole', async () => {
  const target = path.join(dir, 'result.png');
  const versions = Array.from({ length: 8 }, (_, i) => Buffer.alloc(256 * 1024, i + 1));
  await Promise.all(versions.map((data) => writeFileAtomically(target, data)));
  const written = fs.readFileSync(target);
  assert.ok(versions.some((data) => data.equals(written)), 'the file is not any one write whole');
  assert.deepEqual(fs.readdirSync(dir), ['result.png']);
});

test('a write that fails leaves no temporary file behind', async () => {
  const target = path.join(dir, 'missing-folder', 'result.png');
  await assert.rejects(writeFileAtomically(target, Buffer.from('x')), { code: 'ENOENT' });
  const folder = path.join(dir, 'blocked');
  fs.mkdirSync(path.join(folder, 'result.png'), { recursive: true });
  await assert.rejects(writeFileAtomically(path.join(folder, 'result.png'), Buffer.from('x')));
  assert.deepEqual(fs.readdirSync(folder), ['result.png']);
});
