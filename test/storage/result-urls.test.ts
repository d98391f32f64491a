import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import sharp from 'sharp';
import { DiskResultStore } from '../../src/storage/disk-result-store.ts';
import { resultKey } from '../../src/storage/result-store.ts';
import { loadSigningSecret, ResultUrlSigner } from '../../src/storage/signed-url.ts';
import { claimNextTask, completeTask } from '../../src/store/task-queue.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

interface TaskBody {
  id: string;
  status: string;
  output: { url: string | null; expires_at: string | null; width: number; height: number; format: string } | null;
  usage: { credits: number } | null;
}

describeEachEngine('result URLs', (engine) => {
  let server: TestServer;
  let key: string;
  let task: TaskBody;
  let png: Buffer;

  before(async () => {
    server = await startTestServer({ CUTOUT_RESULT_URL_TTL_SECONDS: '600', CUTOUT_RESULT_RETENTION_HOURS: '24' }, { engine });
    ({ key } = await server.account());
    const created = (await (await server.request('/api/v1/bg/removals', { ...createBody({ image_url: 'https://example.test/a.png' }), key })).json()) as TaskBody;
    // Finish the task through the queue as a worker would, with a stored result file.
    const claimed = await claimNextTask(server.db, { leaseMs: 60_000, maxAttempts: 3 });
    assert.equal(claimed?.task.id, created.id);
    png = await sharp({ create: { width: 3, height: 2, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 0.5 } } }).png().toBuffer();
    const fileKey = resultKey(created.id, claimed.task.claims, 'png');
    await new DiskResultStore(path.join(server.dataDir, 'results')).put(fileKey, png);
    assert.ok(await completeTask(server.db, created.id, claimed.leaseToken, { key: fileKey, width: 3, height: 2 }));
    task = (await (await server.request(`/api/v1/bg/removals/${created.id}`, { key })).json()) as TaskBody;
  });
  after(() => server.close());

  test('a succeeded task has an absolute, signed, expiring URL to the service that downloads the file', async () => {
    assert.equal(task.status, 'succeeded');
    assert.deepEqual(task.usage, { credits: 1 });
    const url = new URL(task.output?.url ?? '');
    assert.equal(url.origin, server.url);
    assert.ok(url.searchParams.get('signature'));
    const expiresAt = Date.parse(task.output?.expires_at ?? '');
    assert.ok(expiresAt > Date.now() + 590_000 && expiresAt <= Date.now() + 600_000);
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), png);
  });

  test('each GET returns a freshly signed URL', async () => {
    const later = (await (await server.request(`/api/v1/bg/removals/${task.id}`, { key })).json()) as TaskBody;
    assert.ok(later.output?.url);
    assert.ok(Date.parse(later.output.expires_at ?? '') >= Date.parse(task.output?.expires_at ?? ''));
  });

  test('a tampered URL is refused with 403 result_url_invalid', async () => {
    const url = new URL(task.output?.url ?? '');
    const variants = [
      (u: URL) => u.searchParams.set('signature', `${u.searchParams.get('signature')?.slice(0, -2)}AA`),
      (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600)),
      (u: URL) => u.searchParams.delete('signature'),
      (u: URL) => (u.pathname = u.pathname.replace('.png', '.webp')),
    ];
    for (const tamper of variants) {
      const changed = new URL(url);
      tamper(changed);
      const res = await fetch(changed);
      const body = (await res.json()) as { error: { code: string; request_id: string } };
      assert.equal(res.status, 403, changed.toString());
      assert.equal(body.error.code, 'result_url_invalid');
      assert.ok(body.error.request_id);
    }
  });

  test('only the expiry as it was signed verifies: the same moment spelled with a leading zero is refused with 403 result_url_invalid', async () => {
    const url = new URL(task.output?.url ?? '');
    const zeroed = new URL(url);
    zeroed.searchParams.set('expires', `0${url.searchParams.get('expires')}`);
    const res = await fetch(zeroed);
    assert.equal(res.status, 403, zeroed.toString());
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'result_url_invalid');
    assert.equal((await fetch(url)).status, 200);
  });

  test('an expired URL is refused with 410 result_url_expired', async () => {
    const expired = new URL(task.output?.url ?? '');
    const key = expired.pathname.split('/').pop() ?? '';
    // A URL signed an hour and a quarter ago with a 600 s lifetime.
    const past = new ResultUrlSigner(loadSigningSecret(server.dataDir, undefined), () => server.url, 600).sign(key, Date.now() - 4_500_000);
    const res = await fetch(past.url);
    assert.equal(res.status, 410);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'result_url_expired');
  });

  test('after the retention period the file is deleted, the task stays succeeded and its url becomes null', async () => {
    const before = task.output?.url ?? '';
    const { resultsDeleted } = await server.maintenance.run(Date.now() + 25 * 3_600_000);
    assert.equal(resultsDeleted, 1);
    const later = (await (await server.request(`/api/v1/bg/removals/${task.id}`, { key })).json()) as TaskBody;
    assert.equal(later.status, 'succeeded');
    assert.deepEqual(later.usage, { credits: 1 });
    assert.equal(later.output?.url, null);
    assert.equal(later.output?.expires_at, null);
    assert.equal(later.output?.width, 3);
    const res = await fetch(before);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'result_not_found');
  });

  test('a URL handed out shortly before retention deletes the file expires with the file, not a lifetime later', async () => {
    const created = (await (await server.request('/api/v1/bg/removals', { ...createBody({ image_url: 'https://example.test/b.png' }), key })).json()) as TaskBody;
    const claimed = await claimNextTask(server.db, { leaseMs: 60_000, maxAttempts: 3 });
    assert.equal(claimed?.task.id, created.id);
    const fileKey = resultKey(created.id, claimed.task.claims, 'png');
    await new DiskResultStore(path.join(server.dataDir, 'results')).put(fileKey, png);
    // Finished 24 hours less 100 seconds ago: retention deletes the file in 100 s, the URL's lifetime is 600 s.
    const deletedAt = Date.now() + 100_000;
    assert.ok(await completeTask(server.db, created.id, claimed.leaseToken, { key: fileKey, width: 3, height: 2 }, deletedAt - 24 * 3_600_000));
    const late = (await (await server.request(`/api/v1/bg/removals/${created.id}`, { key })).json()) as TaskBody;
    const expiresAt = Date.parse(late.output?.expires_at ?? '');
    assert.ok(expiresAt <= deletedAt && expiresAt > deletedAt - 5_000, `expires_at ${late.output?.expires_at}`);
    assert.equal(Number(new URL(late.output?.url ?? '').searchParams.get('expires')) * 1000, expiresAt);
    assert.equal((await fetch(late.output?.url ?? '')).status, 200);
  });
});
