import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { findAccount, listLedger } from '../../src/store/accounts-repository.ts';
import { openResults } from '../../src/storage/open-results.ts';
import { claimNextTask, completeTask, failTask } from '../../src/store/task-queue.ts';
import { findTask } from '../../src/store/tasks-repository.ts';
import { createWorker } from '../../src/worker/start-worker.ts';
import type { Worker } from '../../src/worker/worker.ts';
import { startImageServer, type ImageServer } from '../support/image-server.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

describeEachEngine('a worker that dies mid-task', (engine) => {
  let images: ImageServer;
  let server: TestServer;
  let worker: Worker;
  const lease = { leaseMs: 60_000, maxAttempts: 3 };

  before(async () => {
    images = await startImageServer();
    // No in-process worker: the test plays the dead worker itself, then runs a real one step by step.
    server = await startTestServer({ CUTOUT_MAX_ATTEMPTS: '3' }, { engine });
    worker = await createWorker(server.config, server.db, openResults(server.config), pino({ level: 'silent' }));
  });
  after(async () => {
    await server.close();
    await images.close();
  });

  async function createTask(key: string): Promise<string> {
    const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: `${images.url}/fixtures/horse-279.png` }), key });
    return ((await res.json()) as { id: string }).id;
  }

  async function expireLease(taskId: string): Promise<void> {
    await server.db.updateTable('tasks').set({ lease_expires_at: Date.now() - 1 }).where('id', '=', taskId).execute();
  }

  test('its task is taken over after the lease expires, succeeds, and is charged exactly once', async () => {
    const { key, accountId } = await server.account({ credits: 5 });
    const id = await createTask(key);
    const dead = await claimNextTask(server.db, lease);
    assert.equal(dead?.task.id, id);
    assert.equal(await worker.runOnce(), false, 'a task under a live lease is not taken');
    await expireLease(id);
    assert.equal(await worker.runOnce(), true);
    const task = await findTask(server.db, id);
    assert.equal(task?.status, 'succeeded');
    assert.equal(task?.attempts, 2);
    // The dead worker wakes up late: its attempt can neither finish nor fail the task.
    assert.equal(await completeTask(server.db, id, dead.leaseToken, { key: 'bgr_x.png', width: 1, height: 1 }), false);
    assert.equal(await failTask(server.db, id, dead.leaseToken, { code: 'processing_failed', message: 'late' }), false);
    const entries = (await listLedger(server.db, accountId)).filter((e) => e.taskId === id).map((e) => e.kind);
    assert.deepEqual(entries, ['reserve', 'charge']);
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 4);
  });

  test('a task abandoned on every allowed attempt fails with processing_failed and is refunded', async () => {
    const { key, accountId } = await server.account({ credits: 5 });
    const id = await createTask(key);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const claimed = await claimNextTask(server.db, lease);
      assert.equal(claimed?.task.id, id);
      assert.equal(claimed.task.attempts, attempt);
      await expireLease(id);
    }
    assert.equal(await claimNextTask(server.db, lease), undefined, 'no attempts are left to claim');
    await worker.runOnce();
    const task = await findTask(server.db, id);
    assert.equal(task?.status, 'failed');
    assert.equal(task?.error_code, 'processing_failed');
    const entries = (await listLedger(server.db, accountId)).filter((e) => e.taskId === id).map((e) => e.kind);
    assert.deepEqual(entries, ['reserve', 'refund']);
    const account = await findAccount(server.db, accountId);
    assert.equal(account?.creditsAvailable, 5);
    assert.equal(account?.creditsReserved, 0);
  });
});
