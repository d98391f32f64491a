// What `cutout` prints when it cannot start: the variable named and its value, except a secret's;
// one line, no stack trace, for a database it cannot reach or a data folder it cannot use.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { ConfigError, loadConfig } from '../../src/config.ts';
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

test('a database URL refused because its password holds / ? or # unencoded never shows the password, and says to percent-encode it', async () => {
  for (const password of ['pa/ss-Hunter2', 'pa?ss-Hunter2', 'pa#ss-Hunter2']) {
    const run = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: dataDir, DATABASE_URL: `postgres://cutout:${password}@db.internal:5432/cutout` });
    assert.equal(run.code, 1, password);
    assert.match(run.stderr, /DATABASE_URL: .*percent-encode/, password);
    assert.match(run.stderr, /postgres:\/\/cutout:\*\*\*@db\.internal:5432\/cutout/, password);
    assert.doesNotMatch(run.stderr, /Hunter2/, password);
  }
  assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://cutout@db:99999/cutout?password=Hunter2-in-the-query' }), (err: Error) => !/Hunter2/.test(err.message));
});

test('a public URL with a query string, a fragment or a user name stops the start, saying why, since every link would be built broken on it', () => {
  const refused = [
    ['https://cutout.example.com/?utm_source=x', /CUTOUT_PUBLIC_URL: .*query/],
    ['https://cutout.example.com/?', /CUTOUT_PUBLIC_URL: .*query/],
    ['https://cutout.example.com#top', /CUTOUT_PUBLIC_URL: .*fragment/],
    ['https://cutout.example.com/#', /CUTOUT_PUBLIC_URL: .*fragment/],
    ['https://ops:Hunter2@cutout.example.com', /CUTOUT_PUBLIC_URL: .*user name/],
    ['https://ops@cutout.example.com', /CUTOUT_PUBLIC_URL: .*user name/],
  ] as const;
  for (const [value, message] of refused) {
    assert.throws(() => loadConfig({ CUTOUT_PUBLIC_URL: value }), (err: Error) => err instanceof ConfigError && message.test(err.message) && !/Hunter2/.test(err.message), value);
  }
  assert.equal(loadConfig({ CUTOUT_PUBLIC_URL: 'https://cutout.example.com/' }).publicUrl, 'https://cutout.example.com');
});

test('a metrics token shorter than 16 characters is refused without being echoed; a longer one is kept', async () => {
  const short = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: dataDir, CUTOUT_METRICS_TOKEN: 'scrape-me-now' });
  assert.equal(short.code, 1);
  assert.match(short.stderr, /CUTOUT_METRICS_TOKEN/);
  assert.doesNotMatch(short.stderr, /scrape-me-now/);
  assert.equal(loadConfig({ CUTOUT_METRICS_TOKEN: 'scrape-me-now-please' }).metricsToken, 'scrape-me-now-please');
  assert.equal(loadConfig({}).metricsToken, undefined);
  assert.equal(loadConfig({ CUTOUT_METRICS_TOKEN: 'scrape-me-now-please\n' }).metricsToken, 'scrape-me-now-please', 'read from a file, newline and all');
  assert.throws(() => loadConfig({ CUTOUT_METRICS_TOKEN: 'correct horse battery staple' }), /CUTOUT_METRICS_TOKEN: .*no spaces/);
});

// Result and upload URLs are CUTOUT_PUBLIC_URL with a path appended, published as URIs: a query
// or fragment there would swallow that path (every result URL would fetch the home page), and
// anything outside RFC 3986 would be handed to clients as written.
test('a CUTOUT_PUBLIC_URL that URLs cannot be appended to, or that is not written as a URI, stops the start, naming it', () => {
  for (const value of [
    'https://cutout.example.test/#top',
    'https://cutout.example.test/?',
    'https://cutout.example.test/?lang=en',
    'https://ops:pw@cutout.example.test',
    'https://cutout.example.test/my app',
    'https://cütout.example.test',
    'https://cutout.example.test/äpp',
    'https://cutout.example.test\\app',
    'https://cutout.example.test/100%',
    'https://cutout.example.test/a|b',
  ]) {
    assert.throws(() => loadConfig({ CUTOUT_PUBLIC_URL: value }), /CUTOUT_PUBLIC_URL: .*RFC 3986/, value);
  }
  assert.doesNotMatch(String((() => { try { loadConfig({ CUTOUT_PUBLIC_URL: 'https://ops:Hunter2@cutout.example.test' }); } catch (err) { return err; } })()), /Hunter2/);
  for (const [value, kept] of [
    ['https://cutout.example.test/', 'https://cutout.example.test'],
    ['HTTPS://Cutout.Example.test:8443/app/', 'HTTPS://Cutout.Example.test:8443/app'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    ['https://xn--ctout-jua.example.test/my%20app', 'https://xn--ctout-jua.example.test/my%20app'],
    ['https://cutout.example.test\n', 'https://cutout.example.test'],
  ]) {
    assert.equal(loadConfig({ CUTOUT_PUBLIC_URL: value }).publicUrl, kept, value);
  }
});

// The refusal of a non-ASCII host said to percent-encode it, and a host so encoded was taken: its
// links then reach only clients that decode a host (browsers, fetch); curl and Python's urllib
// look up "c%C3%BCtout…" as written. RFC 3986 §3.2.2: such a host goes out in its IDNA form.
test('a CUTOUT_PUBLIC_URL host that is not ASCII, or is percent-encoded, stops the start, asking for its xn-- form', () => {
  for (const value of ['https://cütout.example.test', 'https://c%C3%BCtout.example.test', 'https://cutout.example.test%2F:8443/app']) {
    assert.throws(() => loadConfig({ CUTOUT_PUBLIC_URL: value }), /CUTOUT_PUBLIC_URL: .*xn--/, value);
  }
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

test('the sign-ups per address and hour default to ten and must be a whole number from 1 to 1000000', async () => {
  assert.equal(loadConfig({}).web.signUpsPerHour, 10);
  assert.equal(loadConfig({ CUTOUT_WEB_SIGN_UPS_PER_HOUR: '1' }).web.signUpsPerHour, 1);
  assert.equal(loadConfig({ CUTOUT_WEB_SIGN_UPS_PER_HOUR: '1000000' }).web.signUpsPerHour, 1_000_000);
  for (const value of ['0', '-3', '2.5', 'ten', '1000001']) {
    assert.throws(() => loadConfig({ CUTOUT_WEB_SIGN_UPS_PER_HOUR: value }), /CUTOUT_WEB_SIGN_UPS_PER_HOUR: /, value);
  }
  const refused = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: dataDir, CUTOUT_WEB_SIGN_UPS_PER_HOUR: '0' });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /CUTOUT_WEB_SIGN_UPS_PER_HOUR: .* \(got "0"\)/);
});

test('CUTOUT_TRUSTED_PROXIES takes addresses, CIDR ranges and range names that Fastify accepts; anything else stops the start, naming it', async () => {
  assert.equal(loadConfig({}).trustedProxies, undefined);
  const accepted = loadConfig({ CUTOUT_TRUSTED_PROXIES: ' 10.0.0.5 , 10.1.0.0/16,2001:db8::/48, ::1, loopback,linklocal,uniquelocal' }).trustedProxies;
  assert.deepEqual(accepted, ['10.0.0.5', '10.1.0.0/16', '2001:db8::/48', '::1', 'loopback', 'linklocal', 'uniquelocal']);
  assert.doesNotThrow(() => Fastify({ trustProxy: accepted }));
  // "10.1" and "0x7f.0.0.1" are addresses to ipaddr.js, but not the ones they look like; a /0 trusts
  // everyone, and so does ::ffff:0.0.0.0/96, an IPv4-mapped form of it.
  const mapped = ['::ffff:192.0.2.1', '::ffff:0.0.0.0/96', '::ffff:0x7f.0.0.2', '::ffff:010.0.0.1', '::ffff:7f00:1', '::ffff:127.0.0.0/8', '::192.0.2.1'];
  for (const value of [...mapped, '10.0.0.256', '10.1', '0x7f.0.0.1', '010.0.0.1', 'proxy.internal', 'localhost', '10.0.0.0/33', '10.0.0.0/0', '::/0', '2001:db8::/129', '10.0.0.0/08', '10.0.0.0/255.0.0.0', '10.0.0.0/8/8', '10.0.0.1,', '10.0.0.1,,10.0.0.2']) {
    assert.throws(() => loadConfig({ CUTOUT_TRUSTED_PROXIES: value }), /CUTOUT_TRUSTED_PROXIES: /, value);
  }
  const refused = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: dataDir, CUTOUT_TRUSTED_PROXIES: '127.0.0.1, nginx' });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /CUTOUT_TRUSTED_PROXIES: "nginx" is not an IP address, a CIDR range .* \(got "127\.0\.0\.1, nginx"\)/);
  assert.throws(() => loadConfig({ CUTOUT_TRUSTED_PROXIES: '::ffff:0.0.0.0/96' }), /write the IPv4 address or range itself/);
});

test('a blank value is unset, like an empty one: PORT=" " is the default port, not a random one', () => {
  const config = loadConfig({ PORT: ' ', CUTOUT_SHUTDOWN_GRACE_SECONDS: '\t', CUTOUT_WORKER_CONCURRENCY: '  ' });
  assert.equal(config.port, 8080);
  assert.equal(config.shutdownGraceMs, 30_000);
  assert.equal(config.workerConcurrency, 1);
});

test('a database it cannot reach, a data folder it cannot use, or a file there that is not SQLite, is one line naming the cause', async () => {
  // A port that was just free: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const unreachable = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: dataDir, DATABASE_URL: `postgres://postgres:pw@127.0.0.1:${port}/nope` });
  assert.equal(unreachable.code, 1);
  assert.equal(unreachable.stderr, `cutout: database_unavailable: cannot use the database: connect ECONNREFUSED 127.0.0.1:${port}\n`);
  const file = path.join(dataDir, 'a-file');
  fs.writeFileSync(file, '');
  const notAFolder = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: path.join(file, 'data') });
  assert.equal(notAFolder.code, 1);
  assert.match(notAFolder.stderr, /^cutout: ENOTDIR: not a directory, mkdir '.*a-file\/data'\n$/);
  const damaged = path.join(dataDir, 'damaged');
  fs.mkdirSync(damaged);
  fs.writeFileSync(path.join(damaged, 'cutout.sqlite'), 'this is not an SQLite database, only text long enough to be read as a header');
  const notADatabase = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: damaged });
  assert.equal(notADatabase.code, 1);
  assert.match(notADatabase.stderr, /^cutout: database_unavailable: cannot use the database .*damaged\/cutout\.sqlite: file is not a database\n$/);
});

test('a port in use stops serve with one line', async () => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as net.AddressInfo;
  try {
    const run = await runCli(['serve', '--no-worker'], { CUTOUT_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port) });
    assert.equal(run.code, 1);
    assert.equal(run.stderr, `cutout: cannot listen on HOST "127.0.0.1", PORT ${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`);
    const worker = await runCli(['worker'], { CUTOUT_DATA_DIR: dataDir, HOST: '127.0.0.1', CUTOUT_METRICS_PORT: String(port) });
    assert.equal(worker.code, 1);
    assert.equal(worker.stderr, `cutout: cannot listen on HOST "127.0.0.1", CUTOUT_METRICS_PORT ${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`);
  } finally {
    taken.close();
  }
});

// In a network namespace of its own, so that the name's lookup fails without a query leaving the machine.
const isolated = spawnSync('unshare', ['-n', 'true']).status === 0;
test('a HOST that cannot be looked up stops serve naming HOST, not as a database to try again', { skip: isolated ? false : 'needs unshare -n (root)' }, async () => {
  const run = await runCli(['serve', '--no-worker'], { CUTOUT_DATA_DIR: dataDir, HOST: 'api.cutout.invalid', PORT: '0' }, undefined, { within: ['unshare', '-n'] });
  assert.equal(run.code, 1);
  assert.doesNotMatch(run.stderr, /database|try again/);
  assert.match(run.stderr, /^cutout: cannot listen on HOST "api\.cutout\.invalid", PORT 0: getaddrinfo E[A-Z_]+ api\.cutout\.invalid\n$/);
});

test('a signing secret file of the wrong size stops serve with its code, one line', async () => {
  const folder = path.join(dataDir, 'bad-secret');
  fs.mkdirSync(folder);
  fs.writeFileSync(path.join(folder, 'signing-secret'), 'short');
  const run = await runCli(['serve', '--no-worker'], { CUTOUT_DATA_DIR: folder, HOST: '127.0.0.1', PORT: '0' });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /^cutout: signing_secret_invalid: [^\n]+\n$/);
});
