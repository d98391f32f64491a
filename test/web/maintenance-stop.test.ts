// Stopping the web app's housekeeping as its process shuts down: the run in progress (a slow bucket
// delete) ends with the batch in hand, recorded, before the process closes its database, instead of
// failing against a closed database and logging an error on an ordinary stop.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createAccount } from '../../src/store/accounts-repository.ts';
import { claimNextTask, failTask } from '../../src/store/task-queue.ts';
import { createTask } from '../../src/store/tasks-repository.ts';
import { recordPendingUpload } from '../../src/store/pending-uploads-repository.ts';
import { findTaskSource, recordTaskSource } from '../../src/store/web-tasks-repository.ts';
import { DiskUploadStore, newUploadKey } from '../../src/storage/upload-store.ts';
import { scheduleWebMaintenance } from '../../src/web/web-maintenance.ts';
import { openTestStore } from '../support/engines.ts';
import { withGatedDeletes } from '../support/gated-deletes.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;

/** The real disk store, its deletes held until the test lets them through. */
class SlowUploadStore extends withGatedDeletes(DiskUploadStore) {}

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-web-maintenance-stop-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a stop during a run waits for the upload delete in flight and records it, starts no further sweep, and nothing fails when the database closes', async () => {
  const store = await openTestStore('sqlite');
  const uploads = new SlowUploadStore(dir);
  let closed = false;
  try {
    const at = Date.now() - 48 * 3_600_000;
    const account = await createAccount(store.db, { email: 'web-stop@example.test', plan: 'free', credits: 1 });
    const { task } = await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 1 }, at);
    const uploadKey = newUploadKey();
    await uploads.put(uploadKey, Buffer.from('source image'));
    await recordTaskSource(store.db, task.id, { uploadKey, maxPixels: null }, at);
    const claimed = await claimNextTask(store.db, { leaseMs: 60_000, maxAttempts: 3 }, at);
    assert.ok(claimed && (await failTask(store.db, task.id, claimed.leaseToken, { code: 'processing_failed', message: 'failed' }, at)));
    // An orphaned upload too, which the run sweeps after the expired ones: left to the next start.
    const orphanKey = newUploadKey();
    await uploads.put(orphanKey, Buffer.from('orphaned upload'));
    await recordPendingUpload(store.db, orphanKey, at);

    const errors: string[] = [];
    const logger = pino({ level: 'error' }, new Writable({ write: (line: Buffer, _e, done) => (errors.push(line.toString()), done()) }));
    const stop = scheduleWebMaintenance({ db: store.db, uploads, config: { resultRetentionHours: 24 } }, logger, 1);
    // The schedule's timer does not hold the process open; this does, until its first run deletes.
    const holdOpen = setInterval(() => {}, 1000);
    await uploads.firstDelete;
    clearInterval(holdOpen);
    let returned = false;
    const stopping = Promise.resolve(stop()).then(() => (returned = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(returned, false, 'the stop waits for the delete in flight');
    uploads.answer();
    await stopping;
    assert.equal((await findTaskSource(store.db, task.id))?.uploadKey, null, 'the deleted upload is recorded');
    assert.deepEqual(uploads.deleted, [uploadKey], 'no sweep starts after the stop: the orphaned upload waits for the next start');
    await store.close();
    closed = true;
    assert.deepEqual(errors, []);
  } finally {
    // A failing run still removes its database.
    if (!closed) await store.close();
  }
});
