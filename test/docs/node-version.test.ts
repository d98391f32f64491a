// The Node.js versions the README and package.json ask for must be ones the service starts on: the
// API documentation pages (@fastify/swagger-ui → @fastify/static) require() a dependency that is an
// ES module, which Node loads by default (require(esm)) only from 20.19 on the 20 line and from
// 22.12 on the 22 line; on 20.9–20.18, 21 or 22.0–22.11 the server would not start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.join(import.meta.dirname, '../..');

test('the README and package.json ask for Node.js 20.19+ or 22.12+, the versions that load the ES modules our dependencies require()', async () => {
  const packageJson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
  assert.equal(packageJson.engines.node, '^20.19.0 || >=22.12.0');
  assert.match(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), /Needs Node\.js 20\.19 or newer on the 20 line, or 22\.12 or newer/);
  // A Node without require(esm) by default, as before those versions, cannot load the documentation pages' file server.
  const withoutRequireEsm = promisify(execFile)(process.execPath, ['--no-experimental-require-module', '--input-type=module', '-e', "await import('@fastify/static')"], { cwd: root });
  await assert.rejects(withoutRequireEsm, (err: { stderr?: string }) => /ERR_REQUIRE_ESM/.test(err.stderr ?? ''));
});
