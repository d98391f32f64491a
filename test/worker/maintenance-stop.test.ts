// Stopping the housekeeping of a process that is shutting down: the sweep in progress (a slow bucket
// delete, a backlog) ends with the batch in hand, recorded, before the process closes its database,
// instead of failing against a closed database and logging an error on an ordinary stop.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createAccount } from '../../src/store/accounts-repository.ts';
import type { Db } from '../../src/store/database.ts';
import { retentionBatch } from '../../src/store/maintenance-repository.ts';
import { claimNextTask, completeTask } from '../../src/store/task-queue.ts';
import { createTask } from '../../src/store/tasks-repository.ts';
import { DiskResultStore } from '../../src/storage/disk-result-store.ts';
import { resultKey } from '../../src/storage/result-store.ts';
import { Maintenance } from '../../src/worker/maintenance.ts';
import { openTestStore } from '../support/engines.ts';
import { withGatedDeletes } from '../support/gated-deletes.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;
const config = { resultRetentionHours: 24, idempotencyTtlHours: 24 };

/** The real disk store, its deletes held until the test lets them through. */
class SlowDiskStore extends withGatedDeletes(DiskResultStore) {}

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-maintenance-stop-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** `count` tasks that succeeded two days ago, past retention, each with its result file stored. */
async function expiredResults(db: Db, results: DiskResultStore, count: number): Promise<void> {
  const at = Date.now() - 48 * 3_600_000;
  const account = await createAccount(db, { email: `stop-${count}@example.test`, plan: 'paid', credits: count });
  for (let i = 0; i < count; i++) {
    await createTask(db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: count }, at);
    const claimed = await claimNextTask(db, { leaseMs: 60_000, maxAttempts: 3 }, at);
    assert.ok(claimed);
    const key = resultKey(claimed.task.id, claimed.task.claims, 'png');
    await results.put(key, Buffer.from('result'));
    assert.ok(await completeTask(db, claimed.task.id, claimed.leaseToken, { key, width: 1, height: 1 }, at));
  }
}

test('a stop during a sweep of a backlog returns once the batch in hand is deleted and recorded, leaves the rest to the next start, and nothing fails when the database closes', async () => {
  const store = await openTestStore('sqlite');
  const results = new SlowDiskStore(path.join(dir, 'results'));
  let closed = false;
  try {
    const errors: string[] = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (line: Buffer, _e, done) => (errors.push(line.toString()), done()) }));
    await expiredResults(store.db, results, retentionBatch + 1);
    const maintenance = new Maintenance(store.db, results, config, logger);
    maintenance.start();
    await results.firstDelete;
    let returned = false;
    const stopping = maintenance.stop().then(() => (returned = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(returned, false, 'the stop waits for the deletes in flight');
    results.answer();
    await stopping;
    const marked = await store.db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('result_deleted_at', 'is not', null).executeTakeFirstOrThrow();
    assert.equal(Number(marked.n), retentionBatch, 'the batch in hand recorded, the next batch left');
    await store.close();
    closed = true;
    assert.deepEqual(errors, []);
  } finally {
    // A failing run still removes its database.
    if (!closed) await store.close();
  }
});
