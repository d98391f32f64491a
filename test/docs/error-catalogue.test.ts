import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { envSchema, loadConfig } from '../../src/config.ts';
import { apiDescription } from '../../src/api/openapi-info.ts';
import { apiErrors, taskErrors } from '../../src/domain/errors.ts';

const readme = fs.readFileSync(path.join(import.meta.dirname, '../../README.md'), 'utf8');

test('the README documents every API error code with its status', () => {
  for (const [code, { status }] of Object.entries(apiErrors)) {
    assert.match(readme, new RegExp(`\\| ${status} \\| \`${code}\` \\|`), code);
  }
});

test('the README and the OpenAPI description document every task error code', () => {
  const description = apiDescription(loadConfig({}));
  for (const code of Object.keys(taskErrors)) {
    assert.match(readme, new RegExp(`\\| \`${code}\` \\|`), code);
    assert.ok(description.includes(code), code);
  }
});

test('the README configuration table lists every environment variable the service reads', () => {
  const names = Object.keys(envSchema.shape);
  assert.ok(names.length > 15);
  for (const name of names) assert.match(readme, new RegExp(`^\\| \`${name}\` \\|`, 'm'), `${name} is missing from the README table`);
});
