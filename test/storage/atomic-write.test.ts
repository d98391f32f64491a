// Results and uploads on disk are written under a temporary name and renamed into place.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
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

test('the data is flushed to disk before it takes the final name, and the folder after, so a crash cannot leave the name on an empty file', async () => {
  const target = path.join(dir, 'durable.png');
  const data = Buffer.alloc(64 * 1024, 7);
  // The real fsync runs; the wrapper notes what the folder held at each call.
  const seen: { synced: string; names: string[]; target: Buffer | undefined }[] = [];
  await writeFileAtomically(target, data, async (handle, synced) => {
    seen.push({ synced, names: fs.readdirSync(dir), target: fs.existsSync(target) ? fs.readFileSync(target) : undefined });
    await handle.sync();
  });
  assert.equal(seen.length, 2, 'one flush of the file and one of its folder');
  const [file, folder] = seen;
  assert.match(path.basename(file!.synced), /^durable\.png\.\d+\.[0-9a-f]{12}\.tmp$/, 'the file is flushed under its temporary name');
  assert.equal(file!.target, undefined, 'the file is flushed before the rename');
  assert.equal(folder!.synced, dir, 'then its folder');
  assert.deepEqual(folder!.target, data, 'after the rename');
  assert.deepEqual(fs.readFileSync(target), data);
  fs.rmSync(target);
});

test('a flush that fails fails the write: of the file, before any name is taken; of the folder, after', async () => {
  const eio = () => Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
  const folder = fs.mkdtempSync(path.join(dir, 'failing-'));
  const target = path.join(folder, 'result.png');
  await assert.rejects(writeFileAtomically(target, Buffer.from('x'), async () => Promise.reject(eio())), { code: 'EIO' });
  assert.deepEqual(fs.readdirSync(folder), [], 'no file and no temporary');
  // The rename is done by then, so the file may be there, as a bucket's write that failed may have
  // stored its object; whoever writes it tries again.
  let calls = 0;
  const folderFails = async (handle: FileHandle) => (++calls === 2 ? Promise.reject(eio()) : handle.sync());
  await assert.rejects(writeFileAtomically(target, Buffer.from('x'), folderFails), { code: 'EIO' });
  assert.equal(calls, 2);
  assert.deepEqual(fs.readdirSync(folder), ['result.png']);
});

test('a folder on a file system that cannot flush folders (EINVAL) still takes the write', async () => {
  const folder = fs.mkdtempSync(path.join(dir, 'no-folder-flush-'));
  const target = path.join(folder, 'result.png');
  let calls = 0;
  const einval = () => Object.assign(new Error('EINVAL: invalid argument, fsync'), { code: 'EINVAL' });
  await writeFileAtomically(target, Buffer.from('cutout'), async (handle) => (++calls === 2 ? Promise.reject(einval()) : handle.sync()));
  assert.equal(calls, 2);
  assert.deepEqual(fs.readFileSync(target), Buffer.from('cutout'));
});
