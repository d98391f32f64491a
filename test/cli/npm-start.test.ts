// `npm start` runs its shell command under sh; node must replace that shell (exec), or a SIGTERM
// that npm forwards (docker stop, a supervisor) reaches sh alone and the server keeps running.
// Checked by running the command after the build with a stand-in `node` that reports its pid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

test("npm start's server command execs node in place of the shell, with the allocator variables", async () => {
  const start = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const [build, serve] = start.split(' && ');
  assert.equal(build, 'npm run build --silent');
  assert.ok(serve);
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-npm-start-'));
  try {
    fs.writeFileSync(path.join(bin, 'node'), '#!/bin/sh\necho "pid=$$ arena=$MALLOC_ARENA_MAX args=$*"\n', { mode: 0o755 });
    const child = spawn('/bin/sh', ['-c', serve], { env: { PATH: `${bin}:${process.env.PATH ?? ''}` }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise((resolve) => child.on('close', resolve));
    assert.equal(code, 0);
    assert.equal(out.trim(), `pid=${child.pid} arena=2 args=--no-incremental-marking dist/cli/main.js serve`, 'node runs as the shell process itself');
  } finally {
    fs.rmSync(bin, { recursive: true, force: true });
  }
});
