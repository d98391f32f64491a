import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';

const env = (dataDir: string, extra: Record<string, string> = {}) =>
  loadConfig({ PORT: '0', HOST: '127.0.0.1', CUTOUT_DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...extra });

test('the first start on an empty data folder creates a paid local account and prints its key once', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-boot-'));
  try {
    const printed: string[] = [];
    const first = await startServer(env(dataDir), { worker: false, logger: pino({ level: 'silent' }), print: (t) => printed.push(t) });
    const key = first.bootstrapKey ?? '';
    assert.match(key, /^cut_/);
    assert.ok(printed.join('\n').includes(key));
    const res = await fetch(`${first.url}/api/v1/bg/removals/bgr_none`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 404, 'the key works and the account has API access');
    await first.close();

    const again: string[] = [];
    const second = await startServer(env(dataDir), { worker: false, logger: pino({ level: 'silent' }), print: (t) => again.push(t) });
    assert.equal(second.bootstrapKey, undefined);
    assert.deepEqual(again, []);
    await second.close();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('CUTOUT_BOOTSTRAP=false starts with no account', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-boot-'));
  try {
    const server = await startServer(env(dataDir, { CUTOUT_BOOTSTRAP: 'false' }), { worker: false, logger: pino({ level: 'silent' }), print: () => assert.fail('nothing is printed') });
    assert.equal(server.bootstrapKey, undefined);
    await server.close();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a bad configuration value stops the start with a message naming the variable', () => {
  for (const [name, value] of [
    ['PORT', '70000'],
    ['CUTOUT_RATE_LIMIT_PER_MINUTE', 'fast'],
    ['CUTOUT_ALLOW_PRIVATE_IMAGE_URLS', 'maybe'],
    ['CUTOUT_PUBLIC_URL', 'not a url'],
    ['CUTOUT_IDEMPOTENCY_TTL_HOURS', '2'],
  ] as const) {
    assert.throws(() => loadConfig({ [name]: value }), (err: unknown) => err instanceof ConfigError && err.message.includes(name), name);
  }
});

test('defaults match the documented ones', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.dataDir, path.resolve('./data'));
  assert.equal(config.resultUrlTtlSeconds, 3600);
  assert.equal(config.resultRetentionHours, 24);
  assert.equal(config.fetch.maxBytes, 25 * 1024 * 1024);
  assert.equal(config.fetch.maxRedirects, 5);
  assert.equal(config.maxPixels, 50_000_000);
  assert.equal(config.allowPrivateImageUrls, false);
});
