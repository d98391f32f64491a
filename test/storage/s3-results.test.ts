import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
import { describeEachEngine } from '../support/engines.ts';
import { startImageServer, type ImageServer } from '../support/image-server.ts';
import { waitForFinal } from '../support/poll.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';
import { presignedSignatureIsValid } from '../support/sigv4.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';

describeEachEngine('results in an S3-compatible bucket (real model, s3rver on loopback)', (engine) => {
  let s3: S3Server;
  let images: ImageServer;
  let server: TestServer;
  let store: S3ResultStore;
  let key: string;
  let taskId: string;
  let url: URL;

  before(async () => {
    s3 = await startS3Server();
    images = await startImageServer();
    server = await startTestServer({ ...s3.env, CUTOUT_RESULT_URL_TTL_SECONDS: '900', CUTOUT_S3_PREFIX: 'results/' }, { worker: true, engine });
    if (!server.config.s3) throw new Error('the S3 settings were not applied');
    store = new S3ResultStore(server.config.s3, 900);
    ({ key } = await server.account());
    const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: `${images.url}/fixtures/horse-279.png` }), key });
    taskId = ((await res.json()) as { id: string }).id;
    const { task } = await waitForFinal(server, key, taskId);
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    url = new URL(task.output?.url ?? '');
  });
  after(async () => {
    store.close();
    await server.close();
    await images.close();
    await s3.close();
  });

  test('the worker uploads the cutout and output.url is a presigned GET URL on the bucket with the configured lifetime', async () => {
    assert.equal(url.origin, s3.endpoint);
    assert.equal(url.pathname, `/${s3.bucket}/results/${taskId}-1.png`, 'the key of the first claim, the attempt that finished');
    assert.equal(url.searchParams.get('X-Amz-Expires'), '900');
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    assert.equal(meta.format, 'png');
    assert.equal(meta.channels, 4);
  });

  test('the readiness check reaches the bucket', async () => {
    const res = await server.request('/readyz');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ready', checks: { database: 'ok', storage: 'ok' } });
  });

  test('the URL carries a valid SigV4 signature for the configured credentials, and a changed URL does not', () => {
    const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
    assert.equal(presignedSignatureIsValid(url, credentials), true);
    const otherObject = new URL(url);
    otherObject.pathname = otherObject.pathname.replace(taskId, 'bgr_someoneelse');
    assert.equal(presignedSignatureIsValid(otherObject, credentials), false);
    const longer = new URL(url);
    longer.searchParams.set('X-Amz-Expires', '604800');
    assert.equal(presignedSignatureIsValid(longer, credentials), false);
    assert.equal(presignedSignatureIsValid(url, { ...credentials, secretAccessKey: 'other' }), false);
  });

  test('a presigned URL past its lifetime is refused by the bucket', async () => {
    const old = await store.link(`${taskId}.png`, Date.now() - 3_600_000);
    assert.ok(old.expiresAt < Date.now());
    assert.equal((await fetch(old.url)).status, 403);
  });

  test('retention deletes the object; the task then has no URL and the old URL gets 404', async () => {
    const { resultsDeleted } = await server.maintenance.run(Date.now() + 25 * 3_600_000);
    assert.ok(resultsDeleted >= 1);
    assert.equal((await fetch(url)).status, 404);
    const task = (await (await server.request(`/api/v1/bg/removals/${taskId}`, { key })).json()) as { output: { url: string | null } };
    assert.equal(task.output.url, null);
  });
});

test('an unreachable bucket makes /readyz answer 503 while /healthz stays 200', async () => {
  const s3 = await startS3Server();
  const server = await startTestServer({ ...s3.env, CUTOUT_S3_BUCKET: 'no-such-bucket' });
  try {
    assert.equal((await server.request('/healthz')).status, 200);
    const res = await server.request('/readyz');
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { status: 'not_ready', checks: { database: 'ok', storage: 'failing' } });
  } finally {
    await server.close();
    await s3.close();
  }
});
