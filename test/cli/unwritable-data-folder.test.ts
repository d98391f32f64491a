// What `cutout` says when the SQLite database in its data folder cannot be written by the user it
// runs as (a folder made by root, a file left by `sudo cutout keys create`): the file named and the
// cause, never "busy or cannot be reached; try again shortly", which no wait would mend.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { openDatabase } from '../../src/store/database.ts';
import { runCli } from '../support/cli.ts';

// Root writes anywhere, so as root the command runs as nobody, the usual service user's rights.
const serviceUser = process.getuid?.() === 0 ? { as: { uid: 65534, gid: 65534 } } : {};

let root: string;
before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-unwritable-'));
  fs.chmodSync(root, 0o755);
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

const env = (dataDir: string) => ({ CUTOUT_DATA_DIR: dataDir, HOME: root, HOST: '127.0.0.1', PORT: '0', CUTOUT_SIGNING_SECRET: 'unwritable-test-secret-0123456789abcdef' });

test('a data folder the process cannot write stops serve with the database file named and the folder blamed, not a busy database', async () => {
  const dataDir = path.join(root, 'read-only');
  fs.mkdirSync(dataDir, { mode: 0o555 });
  fs.chmodSync(dataDir, 0o555);
  const run = await runCli(['serve', '--no-worker'], env(dataDir), undefined, serviceUser);
  assert.equal(run.code, 1);
  assert.doesNotMatch(run.stderr, /busy|try again/);
  assert.equal(run.stderr, `cutout: database_unavailable: cannot open the database ${dataDir}/cutout.sqlite: unable to open database file; ${dataDir} must be writable by the user that runs cutout\n`);
});

test('a database file the process cannot write stops serve saying so, not a busy database', async () => {
  const dataDir = path.join(root, 'foreign-file');
  fs.mkdirSync(dataDir);
  fs.chmodSync(dataDir, 0o777);
  const db = await openDatabase({ dataDir });
  await db.destroy();
  fs.chmodSync(path.join(dataDir, 'cutout.sqlite'), 0o444);
  // The first write of the start: the local account, on a database that has none.
  const run = await runCli(['serve', '--no-worker'], env(dataDir), undefined, serviceUser);
  assert.equal(run.code, 1);
  assert.doesNotMatch(run.stderr, /busy|try again/);
  assert.match(run.stderr, /^cutout: database_read_only: the database cannot be written \(attempt to write a readonly database\): the data folder \(CUTOUT_DATA_DIR\) and the cutout\.sqlite files in it must be writable by the user that runs cutout\n$/);
});

// A process that runs the model saves its optimised graph under <data folder>/models; its thread's
// failure had only the main thread's stack to show, which says nothing about the folder.
test('a data folder where the optimised model cannot be saved stops a model-running command with one line, no stack trace', async () => {
  const dataDir = path.join(root, 'no-models');
  fs.mkdirSync(dataDir);
  fs.chmodSync(dataDir, 0o555);
  const out = path.join(root, 'out');
  fs.mkdirSync(out);
  fs.chmodSync(out, 0o777);
  const photo = path.join(root, 'photo.png');
  fs.writeFileSync(photo, await sharp({ create: { width: 8, height: 8, channels: 3, background: '#36c' } }).png().toBuffer());
  const run = await runCli(['remove', photo, '--out-dir', out], env(dataDir), undefined, serviceUser);
  assert.equal(run.code, 1);
  assert.equal(run.stderr, `cutout: model_load_failed: model failed to load: EACCES: permission denied, mkdir '${dataDir}/models'\n`);
});
