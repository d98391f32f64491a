// `npm install` must keep working offline and on npm versions that run no dependency's install
// script unless package.json allows it (npm 11.19 warns about each one it is not told about).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { z } from 'zod';

const readJson = (name: string): unknown => JSON.parse(fs.readFileSync(new URL(`../../${name}`, import.meta.url), 'utf8'));

const manifest = z.object({ allowScripts: z.record(z.string(), z.boolean()) }).parse(readJson('package.json'));
const lockfile = z
  .object({ packages: z.record(z.string(), z.object({ hasInstallScript: z.boolean().optional() })) })
  .parse(readJson('package-lock.json'));

const withInstallScripts = Object.entries(lockfile.packages)
  .filter(([, entry]) => entry.hasInstallScript === true)
  .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));

describe('install scripts', () => {
  it('every locked dependency with an install script is allowed or denied by name in package.json', () => {
    assert.ok(withInstallScripts.length > 0, 'the lockfile lists packages with install scripts');
    for (const name of withInstallScripts) {
      assert.ok(name in manifest.allowScripts, `package.json allowScripts decides for ${name}`);
    }
    for (const key of Object.keys(manifest.allowScripts)) {
      assert.ok(!/@\d/.test(key), `${key} is allowed by name, so a version bump does not silently skip its build`);
    }
  });

  it('better-sqlite3 may build its native binding at install, and onnxruntime-node never downloads GPU libraries', () => {
    assert.equal(manifest.allowScripts['better-sqlite3'], true);
    const db = new SQLite(':memory:');
    assert.deepEqual(db.prepare('select 1 as one').get(), { one: 1 }, 'the binding built at install loads');
    db.close();
    assert.equal(manifest.allowScripts['onnxruntime-node'], false);
    // npm versions without allowScripts run the script; .npmrc tells it to skip the download there.
    const npmrc = fs.readFileSync(new URL('../../.npmrc', import.meta.url), 'utf8');
    assert.match(npmrc, /^onnxruntime-node-install=skip$/m);
  });
});
