// The Node.js version the README and package.json ask for must be one the service starts on: the API
// documentation pages (@fastify/swagger-ui → @fastify/static) require() a dependency that is an ES
// module, which Node loads only from 20.19 on (require(esm)); on 20.9–20.18 the server would not start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.join(import.meta.dirname, '../..');

test('the README and package.json ask for Node.js 20.19, the first 20.x that loads the ES modules our dependencies require()', async () => {
  const packageJson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
  assert.equal(packageJson.engines.node, '>=20.19');
  assert.match(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), /Needs Node\.js 20\.19 or newer/);
  // A Node without require(esm), as before 20.19, cannot load the documentation pages' file server.
  const withoutRequireEsm = promisify(execFile)(process.execPath, ['--no-experimental-require-module', '--input-type=module', '-e', "await import('@fastify/static')"], { cwd: root });
  await assert.rejects(withoutRequireEsm, (err: { stderr?: string }) => /ERR_REQUIRE_ESM/.test(err.stderr ?? ''));
});
