// The web app's links to a result, like the API's, never outlive the file: retention deletes it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { DiskResultStore } from '../../src/storage/disk-result-store.ts';
import { resultKey } from '../../src/storage/result-store.ts';
import { claimNextTask, completeTask } from '../../src/store/task-queue.ts';
import { createTask } from '../../src/store/tasks-repository.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({ CUTOUT_RESULT_URL_TTL_SECONDS: '600', CUTOUT_RESULT_RETENTION_HOURS: '24' });
});
after(() => server.close());

test("a task page's download link made 100 s before retention deletes the file expires with it, not 600 s later", async () => {
  const email = uniqueEmail();
  const client = new WebClient(server.url);
  await client.signUp(email, goodPassword);
  const account = await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  const { task } = await createTask(server.db, {
    accountId: account.id,
    input: { image_url: 'https://example.test/c.png', subject: 'auto', precision: 'standard', output_format: 'png' },
    idempotencyKey: undefined,
    maxActiveTasks: 10,
  });
  const claimed = await claimNextTask(server.db, { leaseMs: 60_000, maxAttempts: 3 });
  assert.equal(claimed?.task.id, task.id);
  const key = resultKey(task.id, claimed.task.claims, 'png');
  await new DiskResultStore(path.join(server.dataDir, 'results')).put(key, Buffer.from('png'));
  const deletedAt = Date.now() + 100_000;
  assert.ok(await completeTask(server.db, task.id, claimed.leaseToken, { key, width: 1, height: 1 }, deletedAt - 24 * 3_600_000));
  const status = JSON.parse((await client.get(`/app/tasks/${task.id}/status`)).body) as { result: { url: string } | null };
  const expires = Number(new URL(status.result?.url ?? '').searchParams.get('expires')) * 1000;
  assert.ok(expires <= deletedAt && expires > deletedAt - 5_000, `expires ${new Date(expires).toISOString()}`);
  const history = (await client.get('/app/history')).body;
  const linked = [...history.matchAll(/expires=(\d+)/g)].map((m) => Number(m[1]) * 1000);
  assert.ok(linked.length > 0 && linked.every((at) => at <= deletedAt), history.slice(0, 200));
});
