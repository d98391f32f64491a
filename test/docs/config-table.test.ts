import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { envSchema } from '../../src/config.ts';

test('the README configuration table lists every environment variable the service reads', () => {
  const readme = fs.readFileSync(path.join(import.meta.dirname, '../../README.md'), 'utf8');
  for (const name of Object.keys(envSchema.shape)) {
    assert.match(readme, new RegExp(`^\\| \`${name}\` \\|`, 'm'), `${name} is missing from the README`);
  }
});
