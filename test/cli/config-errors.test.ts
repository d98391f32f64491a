// What `cutout` prints when its configuration is refused: the variable named and its value, except a secret's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { runCli } from '../support/cli.ts';

let dataDir: string;
before(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-config-errors-'));
});
after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('a refused secret is never echoed, and a URL is shown without its password', async () => {
  const secret = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: dataDir, CUTOUT_SIGNING_SECRET: 'hunter2-my-real-secret' });
  assert.equal(secret.code, 1);
  assert.match(secret.stderr, /CUTOUT_SIGNING_SECRET/);
  assert.doesNotMatch(secret.stderr, /hunter2/);
  const s3 = await runCli(['accounts', 'show', 'acct_x'], {
    CUTOUT_DATA_DIR: dataDir,
    CUTOUT_S3_BUCKET: 'b',
    AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-secret-key',
    AWS_SESSION_TOKEN: 'session-token-value',
    CUTOUT_S3_ENDPOINT: 'not a url',
    CUTOUT_SIGNING_SECRET: 'x',
  });
  assert.equal(s3.code, 1);
  assert.doesNotMatch(s3.stderr, /wJalr|session-token-value/);
  const url = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: dataDir, DATABASE_URL: 'mysql://cutout:S3cretPassw0rd@127.0.0.1/cutout' });
  assert.equal(url.code, 1);
  assert.match(url.stderr, /DATABASE_URL/);
  assert.match(url.stderr, /mysql:\/\/cutout:\*\*\*@127\.0\.0\.1\/cutout/);
  assert.doesNotMatch(url.stderr, /S3cretPassw0rd/);
});

test('result URL lifetimes and other durations are bounded, the variable named', async () => {
  const ttl = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: dataDir, CUTOUT_RESULT_URL_TTL_SECONDS: '10000000000000' });
  assert.equal(ttl.code, 1);
  assert.match(ttl.stderr, /CUTOUT_RESULT_URL_TTL_SECONDS: must be at most 604800/);
  assert.equal(loadConfig({ CUTOUT_RESULT_URL_TTL_SECONDS: '604800' }).resultUrlTtlSeconds, 604800);
  for (const name of ['CUTOUT_LEASE_SECONDS', 'CUTOUT_FETCH_TIMEOUT_SECONDS', 'CUTOUT_RESULT_RETENTION_HOURS', 'CUTOUT_IDEMPOTENCY_TTL_HOURS', 'CUTOUT_MAX_ACTIVE_TASKS', 'CUTOUT_RATE_LIMIT_PER_MINUTE']) {
    assert.throws(() => loadConfig({ [name]: '1e13' }), new RegExp(`${name}: .*at most`), name);
  }
});

test('a blank value is unset, like an empty one: PORT=" " is the default port, not a random one', () => {
  const config = loadConfig({ PORT: ' ', CUTOUT_SHUTDOWN_GRACE_SECONDS: '\t', CUTOUT_WORKER_CONCURRENCY: '  ' });
  assert.equal(config.port, 8080);
  assert.equal(config.shutdownGraceMs, 30_000);
  assert.equal(config.workerConcurrency, 1);
});
