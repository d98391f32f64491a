import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { loadSigningSecret, SigningSecretError } from '../../src/storage/signed-url.ts';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-secret-'));
}

test('a fresh data folder gets a 32-byte secret, kept for every later load and readable only by its owner', () => {
  const dir = tempDir();
  try {
    const first = loadSigningSecret(dir, undefined);
    assert.equal(first.length, 32);
    assert.deepEqual(loadSigningSecret(dir, undefined), first);
    assert.equal(fs.statSync(path.join(dir, 'signing-secret')).mode & 0o777, 0o600);
    assert.deepEqual(fs.readdirSync(dir), ['signing-secret'], 'no temporary file is left behind');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an empty or truncated secret file is refused with signing_secret_invalid, never used as a key', () => {
  const dir = tempDir();
  try {
    for (const content of [Buffer.alloc(0), Buffer.alloc(5, 1)]) {
      fs.writeFileSync(path.join(dir, 'signing-secret'), content);
      assert.throws(
        () => loadSigningSecret(dir, undefined),
        (err: unknown) => err instanceof SigningSecretError && err.code === 'signing_secret_invalid' && err.message.includes(`holds ${content.length} bytes`),
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('processes starting at once on a fresh data folder all load the same whole secret', async () => {
  const base = tempDir();
  const trials = 200;
  try {
    const children = [1, 2, 3].map(() =>
      spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'signing-secret-child.ts'), base, String(trials), '4'], {
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    );
    const outputs = children.map((child) => readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]());
    for (const lines of outputs) assert.equal((await lines.next()).value, 'ready');
    const start = Date.now() + 100;
    for (const child of children) child.stdin!.end(`${start}\n`);
    const results = await Promise.all(outputs.map(async (lines) => JSON.parse((await lines.next()).value as string) as string[]));
    for (let i = 0; i < trials; i++) {
      const loaded = results.map((r) => r[i]);
      assert.match(loaded[0]!, /^[0-9a-f]{64}$/, `trial ${i}: ${loaded.join(' | ')}`);
      assert.deepEqual(loaded, [loaded[0], loaded[0], loaded[0]], `trial ${i}: every process signs with the one secret kept in the folder`);
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});
