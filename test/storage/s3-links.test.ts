import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resultKey } from '../../src/storage/result-store.ts';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
import { createApiKey } from '../../src/store/api-keys-repository.ts';
import { claimNextTask, completeTask } from '../../src/store/task-queue.ts';
import { startS3Server } from '../support/s3-server.ts';
import { createBody, startTestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from '../web/web-client.ts';

/**
 * Temporary credentials as an ECS task role hands them out, from the container credentials
 * endpoint the SDK's default chain asks when AWS_CONTAINER_CREDENTIALS_FULL_URI is set (here on loopback).
 */
async function withRoleCredentials<T>(expiration: () => Date | undefined, run: () => Promise<T>): Promise<T> {
  // Without an expiration the endpoint fails as a throttled or broken one does.
  const endpoint = http.createServer((_request, response) => {
    const ends = expiration();
    if (!ends) {
      response.statusCode = 500;
      response.end('{"code":"Throttling","message":"credentials endpoint unavailable"}');
      return;
    }
    response.setHeader('Content-Type', 'application/json');
    response.end(JSON.stringify({ AccessKeyId: 'S3RVER', SecretAccessKey: 'S3RVER', Token: 'role-session', Expiration: ends.toISOString() }));
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const saved = { ...process.env };
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) delete process.env[name];
  process.env.AWS_CONTAINER_CREDENTIALS_FULL_URI = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/role`;
  // No shared config files are read: the chain must reach the endpoint above.
  process.env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/credentials';
  process.env.AWS_CONFIG_FILE = '/nonexistent/config';
  try {
    return await run();
  } finally {
    process.env = saved;
    await new Promise<void>((resolve) => endpoint.close(() => resolve()));
  }
}

test('a presigned URL made with a role whose credentials expire in 15 minutes lives 15 minutes, and the expiry it reports says so', async () => {
  const s3 = await startS3Server();
  try {
    const expiration = new Date(Date.now() + 15 * 60_000);
    await withRoleCredentials(() => expiration, async () => {
      const store = new S3ResultStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', prefix: '', forcePathStyle: true, timeoutMs: 5000, credentials: undefined }, 7 * 24 * 3600);
      try {
        const now = Date.now();
        const link = await store.link('bgr_rolecredentials0001-1.png', now);
        const url = new URL(link.url);
        assert.equal(url.searchParams.get('X-Amz-Security-Token'), 'role-session');
        const lifetime = Number(url.searchParams.get('X-Amz-Expires'));
        assert.ok(lifetime <= 15 * 60 && lifetime >= 15 * 60 - 5, `X-Amz-Expires ${lifetime}`);
        assert.equal(link.expiresAt, Math.floor(now / 1000) * 1000 + lifetime * 1000);
      } finally {
        store.close();
      }
    });
  } finally {
    await s3.close();
  }
});

test('a presigned URL never outlives the retention of its file', async () => {
  const s3 = await startS3Server();
  const store = new S3ResultStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', prefix: '', forcePathStyle: true, timeoutMs: 5000, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', sessionToken: undefined } }, 3600);
  try {
    const now = Date.now();
    const link = await store.link('bgr_retentionbound0001-1.png', now, now + 120_000);
    const lifetime = Number(new URL(link.url).searchParams.get('X-Amz-Expires'));
    assert.ok(lifetime <= 120 && lifetime >= 119, `X-Amz-Expires ${lifetime}`);
    assert.ok(link.expiresAt <= now + 120_000);
  } finally {
    store.close();
    await s3.close();
  }
});

test('a succeeded task read while the role credentials cannot be renewed gets 503 service_unavailable (and the web app its outage page), and its URL once they can', async () => {
  let renewing = false;
  await withRoleCredentials(() => (renewing ? new Date(Date.now() + 3_600_000) : undefined), async () => {
    const s3 = await startS3Server();
    const { AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _secret, ...bucket } = s3.env;
    const server = await startTestServer(bucket);
    try {
      const email = uniqueEmail();
      const browser = new WebClient(server.url);
      await browser.signUp(email, goodPassword);
      const { id: accountId } = await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
      await server.db.updateTable('accounts').set({ plan: 'paid' }).where('id', '=', accountId).execute();
      const { key } = await createApiKey(server.db, accountId, 'test');
      const created = (await (await server.request('/api/v1/bg/removals', { ...createBody({ image_url: 'https://example.test/a.png' }), key })).json()) as { id: string };
      const claimed = await claimNextTask(server.db, { leaseMs: 60_000, maxAttempts: 3 });
      assert.equal(claimed?.task.id, created.id);
      assert.ok(await completeTask(server.db, created.id, claimed.leaseToken, { key: resultKey(created.id, claimed.task.claims, 'png'), width: 1, height: 1 }));

      const refused = await server.request(`/api/v1/bg/removals/${created.id}`, { key });
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'service_unavailable');
      const page = await browser.get('/app/history');
      assert.equal(page.response.status, 503);
      assert.equal(page.response.headers.get('retry-after'), '5');

      renewing = true;
      const served = await server.request(`/api/v1/bg/removals/${created.id}`, { key });
      assert.equal(served.status, 200);
      const url = new URL(((await served.json()) as { output: { url: string } }).output.url);
      assert.equal(url.searchParams.get('X-Amz-Security-Token'), 'role-session');
    } finally {
      await server.close();
      await s3.close();
    }
  });
});
