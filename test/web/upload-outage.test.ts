// A browser upload to a bucket that takes connections and never answers: the visitor gets the
// outage page (503, Retry-After) within CUTOUT_S3_TIMEOUT_SECONDS, not after each of the SDK's
// attempts has had that long, no task is made, and the same upload goes through once the bucket
// is back. Viewing an uploaded original while the bucket is out gets the same page, logged as the
// storage's outage: the SDK's errors carry socket codes (ECONNRESET, ETIMEDOUT) that would
// otherwise pass for the database's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { fixtureImage } from '../support/image-server.ts';
import { LogCollector } from '../support/log-collector.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

// Long enough that the 2.5 timeouts the answer may take leave a loaded machine room, and short of
// the three attempts (3 timeouts) that the upload took without its deadline.
const timeoutSeconds = 2;

let s3: S3Server;
let gate: TcpGate;
let server: TestServer;
const log = new LogCollector();

before(async () => {
  s3 = await startS3Server();
  gate = await startTcpGate(Number(new URL(s3.endpoint).port));
  server = await startTestServer(
    { ...s3.env, CUTOUT_S3_ENDPOINT: `http://127.0.0.1:${gate.port}`, CUTOUT_S3_TIMEOUT_SECONDS: String(timeoutSeconds), CUTOUT_WEB_FREE_CREDITS: '2' },
    { logger: pino({ level: 'error' }, log.stream) },
  );
});
after(async () => {
  await server.close();
  await gate.close();
  await s3.close();
});

test('an upload to a bucket that never answers gets the outage page within the store timeout, and goes through once the bucket is back', { timeout: 60_000 }, async () => {
  const client = new WebClient(server.url);
  await client.signUp(uniqueEmail(), goodPassword);
  await client.get('/app/remove');
  const upload = () =>
    client.post('/app/removals', { subject: 'auto', precision: 'standard', output_format: 'png', image_url: '' }, { name: 'toy.png', data: fixtureImage('am-gt07.png'), type: 'image/png' });
  const tasks = () => server.db.selectFrom('tasks').select('id').execute();

  gate.silence();
  try {
    const started = Date.now();
    const { response, body } = await upload();
    const elapsed = Date.now() - started;
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '5');
    assert.match(body, /Temporarily unavailable/);
    assert.ok(elapsed < 2.5 * timeoutSeconds * 1000, `answered after ${elapsed} ms`);
    assert.deepEqual(await tasks(), []);
    assert.deepEqual(log.entries.map((e) => e.msg), ['storage unavailable']);
  } finally {
    gate.open();
  }

  await client.get('/app/remove');
  const { response } = await upload();
  assert.equal(response.status, 303);
  assert.equal((await tasks()).length, 1);
});

test("viewing an uploaded original while the bucket resets connections or never answers gets the outage page, logged as the storage's", { timeout: 60_000 }, async () => {
  const client = new WebClient(server.url);
  await client.signUp(uniqueEmail(), goodPassword);
  await client.get('/app/remove');
  const fields = { subject: 'auto', precision: 'standard', output_format: 'png', image_url: '' };
  const { response: created } = await client.post('/app/removals', fields, { name: 'toy.png', data: fixtureImage('am-gt07.png'), type: 'image/png' });
  assert.equal(created.status, 303);
  const taskId = (created.headers.get('location') ?? '').split('/').pop() ?? '';
  const { upload_key: uploadKey } = await server.db.selectFrom('web_task_sources').select('upload_key').where('task_id', '=', taskId).executeTakeFirstOrThrow();
  const original = `/app/uploads/${uploadKey}`;
  assert.equal((await client.get(original)).response.status, 200);

  for (const [outage, cut] of [
    ['never answers', () => gate.silence()],
    ['resets connections', () => gate.shut()],
  ] as const) {
    const logged = log.entries.length;
    cut();
    try {
      const started = Date.now();
      const { response, body } = await client.get(original);
      const elapsed = Date.now() - started;
      assert.equal(response.status, 503, `${outage}: ${body}`);
      assert.equal(response.headers.get('retry-after'), '5');
      assert.match(body, /Temporarily unavailable/);
      assert.ok(elapsed < 2.5 * timeoutSeconds * 1000, `${outage}: answered after ${elapsed} ms`);
      assert.deepEqual(log.entries.slice(logged).map((e) => e.msg), ['storage unavailable'], outage);
    } finally {
      gate.open();
    }
  }

  const { response } = await client.get(original);
  assert.deepEqual([response.status, response.headers.get('content-type')], [200, 'image/webp']);
});
