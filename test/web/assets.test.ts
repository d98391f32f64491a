// The stylesheet and script of the pages, asked for by any visitor: a name that is not one of them
// is a 404, whatever it is, and never takes the server down (a real `cutout serve` process, so a
// crash shows as one).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCutout, type CutoutProcess } from '../support/processes.ts';

let dataDir: string;
let server: CutoutProcess;

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-assets-'));
  server = await startCutout('serve', ['serve', '--no-worker'], { CUTOUT_DATA_DIR: dataDir, CUTOUT_BOOTSTRAP: 'false' });
});

after(async () => {
  await server.stop('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('an asset named like a property of every object (constructor, __proto__, toString) is a 404, and the server goes on serving', async () => {
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'nope.css']) {
    const response = await fetch(`${server.url}/assets/${name}`);
    assert.equal(response.status, 404, name);
    await response.body?.cancel();
  }
  const stylesheet = await fetch(`${server.url}/assets/web.css`);
  assert.equal(stylesheet.status, 200);
  assert.match(await stylesheet.text(), /Cutout web app/);
});
