// Every upload the remove form stores is known to the database before its bytes are: one whose task
// was never committed (the process died between the put and the commit, or the delete after a
// failed create failed) is deleted by web maintenance once no live request can still own it.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { createAccount, findAccount, grantCredits } from '../../src/store/accounts-repository.ts';
import { claimNextTask, failTask } from '../../src/store/task-queue.ts';
import { createTask } from '../../src/store/tasks-repository.ts';
import { findTaskSource } from '../../src/store/web-tasks-repository.ts';
import { DiskUploadStore } from '../../src/storage/upload-store.ts';
import { adoptUpload, discardUpload, storeUpload, UploadDiscardedError } from '../../src/web/uploads.ts';
import { pendingUploadGraceMs, runWebMaintenance } from '../../src/web/web-maintenance.ts';
import { describeEachEngine } from '../support/engines.ts';
import { fixtureImage } from '../support/image-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

const hourMs = 3_600_000;
const photo = { name: 'toy.png', data: fixtureImage('am-gt07.png'), type: 'image/png' };
const fields = { subject: 'auto', precision: 'standard', output_format: 'png', image_url: '' };

/**
 * The real disk store, except that the keys in failOnce fail their next delete, and a delete of a
 * key in `held` waits until the test lets it go (a bucket's round trip, stretched at will).
 */
class FlakyUploadStore extends DiskUploadStore {
  readonly failOnce = new Set<string>();
  readonly held = new Map<string, { reached: () => void; release: Promise<void> }>();
  override async delete(key: string): Promise<void> {
    if (this.failOnce.delete(key)) throw new Error(`simulated S3 503 SlowDown for ${key}`);
    const hold = this.held.get(key);
    if (hold) {
      hold.reached();
      await hold.release;
    }
    await super.delete(key);
  }

  /** Holds the next delete of key; resolves `reached` when it starts, and waits for `release()`. */
  hold(key: string): { reached: Promise<void>; release: () => void } {
    let reached!: () => void;
    let release!: () => void;
    const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
    const releasePromise = new Promise<void>((resolve) => (release = resolve));
    this.held.set(key, { reached, release: releasePromise });
    return { reached: reachedPromise, release };
  }
}

describeEachEngine('uploads no task came to own', (engine) => {
  let server: TestServer;
  let uploads: FlakyUploadStore;
  const warnings: string[] = [];
  const logger = { warn: (fields: { key: string }) => void warnings.push(fields.key) };
  const maintain = (now: number) => runWebMaintenance({ db: server.db, uploads, config: server.config, logger }, now);
  const stored = async (key: string) => (await uploads.read(key)) !== undefined;

  before(async () => {
    // No free credits: an account can make a task only once a test grants it some.
    server = await startTestServer({ CUTOUT_WEB_FREE_CREDITS: '0' }, { engine });
    // The server's own upload folder, so files it stores and files the tests store are the same.
    uploads = new FlakyUploadStore(path.join(server.dataDir, 'uploads'));
  });
  after(async () => {
    await server.close();
  });
  // Each test counts the records it leaves; one that fails must not leave them to the next.
  afterEach(async () => {
    await server.db.deleteFrom('pending_uploads').execute();
    uploads.failOnce.clear();
    uploads.held.clear();
    warnings.length = 0;
  });

  async function pendingKeys(): Promise<string[]> {
    const rows = await server.db.selectFrom('pending_uploads').select('upload_key').orderBy('upload_key').execute();
    return rows.map((row) => row.upload_key);
  }

  async function signedUp(credits: number): Promise<{ client: WebClient; accountId: string }> {
    const client = new WebClient(server.url);
    const email = uniqueEmail();
    await client.signUp(email, goodPassword);
    const { id } = await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    if (credits > 0) await grantCredits(server.db, id, credits, false);
    await client.get('/app/remove');
    return { client, accountId: id };
  }

  test('an upload left by a crash between its put and its task is kept through the grace period, then deleted', async () => {
    const t0 = Date.now();
    // What the remove form does before it creates the task; the process "dies" here.
    const key = await storeUpload({ db: server.db, uploads }, photo.data, t0);

    const early = await maintain(t0 + pendingUploadGraceMs - 1);
    assert.equal(early.orphanedUploads, 0);
    assert.equal(await stored(key), true, 'a request may still be about to commit its task');
    assert.deepEqual(await pendingKeys(), [key]);

    const late = await maintain(t0 + pendingUploadGraceMs + 1);
    assert.equal(late.orphanedUploads, 1);
    assert.equal(await stored(key), false);
    assert.deepEqual(await pendingKeys(), []);
  });

  test('a successful upload leaves nothing pending, and its file outlives the grace period until its task’s retention ends', async () => {
    const { client } = await signedUp(1);
    const { response } = await client.post('/app/removals', fields, photo);
    assert.equal(response.status, 303);
    const taskId = (response.headers.get('location') ?? '').split('/').pop() ?? '';
    const key = (await findTaskSource(server.db, taskId))?.uploadKey;
    assert.ok(key);
    assert.deepEqual(await pendingKeys(), [], 'the task owns its upload from the commit that made it');

    assert.equal((await maintain(Date.now() + 2 * pendingUploadGraceMs)).orphanedUploads, 0);
    assert.equal(await stored(key), true, 'a queued task keeps its upload however long it waits');

    const finished = Date.now();
    const claimed = await claimNextTask(server.db, { leaseMs: 60_000, maxAttempts: 3 }, finished);
    assert.equal(claimed?.task.id, taskId);
    assert.ok(await failTask(server.db, taskId, claimed.leaseToken, { code: 'processing_failed', message: 'failed' }, finished));
    const retentionMs = server.config.resultRetentionHours * hourMs;
    assert.equal((await maintain(finished + retentionMs - 1)).uploads, 0);
    assert.equal(await stored(key), true);
    assert.equal((await maintain(finished + retentionMs + 1)).uploads, 1);
    assert.equal(await stored(key), false);
  });

  test('a create that fails deletes its upload at once and leaves nothing pending', async () => {
    const { client } = await signedUp(0);
    const folder = path.join(server.dataDir, 'uploads');
    const before = fs.readdirSync(folder).sort();
    const { response } = await client.post('/app/removals', fields, photo);
    assert.equal(response.status, 402);
    assert.deepEqual(fs.readdirSync(folder).sort(), before);
    assert.deepEqual(await pendingKeys(), []);
  });

  test('an orphaned upload whose delete fails stays recorded, is logged, and is deleted by the next run', async () => {
    const t0 = Date.now();
    const key = await storeUpload({ db: server.db, uploads }, photo.data, t0);
    uploads.failOnce.add(key);

    assert.equal((await maintain(t0 + pendingUploadGraceMs + 1)).orphanedUploads, 0);
    assert.deepEqual(warnings, [key]);
    assert.equal(await stored(key), true);
    assert.deepEqual(await pendingKeys(), [key], 'the record stays so the next run finds the file again');

    assert.equal((await maintain(t0 + pendingUploadGraceMs + 60_000)).orphanedUploads, 1);
    assert.equal(await stored(key), false);
    assert.deepEqual(await pendingKeys(), []);
  });

  test('when the delete after a failed create fails, the upload stays pending and maintenance deletes it later', async () => {
    const t0 = Date.now();
    const key = await storeUpload({ db: server.db, uploads }, photo.data, t0);
    uploads.failOnce.add(key);

    await discardUpload({ db: server.db, uploads }, key, logger);
    assert.deepEqual(warnings, [key], 'logged, not thrown: the visitor still gets the create’s own answer');
    assert.deepEqual(await pendingKeys(), [key]);

    assert.equal((await maintain(t0 + pendingUploadGraceMs + 1)).orphanedUploads, 1);
    assert.equal(await stored(key), false);
    assert.deepEqual(await pendingKeys(), []);
  });

  test('a request stalled past the grace period cannot make a task from the upload maintenance took', async () => {
    const t0 = Date.now();
    const key = await storeUpload({ db: server.db, uploads }, photo.data, t0);
    assert.equal((await maintain(t0 + pendingUploadGraceMs + 1)).orphanedUploads, 1);

    const account = await createAccount(server.db, { email: uniqueEmail(), plan: 'free', credits: 1 });
    const input = { image_url: `${server.url}/app/uploads/${key}`, subject: 'auto', precision: 'standard', output_format: 'png' } as const;
    await assert.rejects(
      createTask(server.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 1, onCreate: (tx) => adoptUpload(tx, key) }),
      UploadDiscardedError,
    );
    const tasks = await server.db.selectFrom('tasks').select('id').where('account_id', '=', account.id).execute();
    assert.deepEqual(tasks, [], 'the create rolled back');
    assert.equal((await findAccount(server.db, account.id))?.creditsAvailable, 1);
  });

  test('a task cannot adopt an upload that maintenance has claimed but whose file it is still deleting', async () => {
    const t0 = Date.now();
    const key = await storeUpload({ db: server.db, uploads }, photo.data, t0);
    const hold = uploads.hold(key);
    const sweep = maintain(t0 + pendingUploadGraceMs + 1);
    await hold.reached;

    const account = await createAccount(server.db, { email: uniqueEmail(), plan: 'free', credits: 1 });
    const input = { image_url: `${server.url}/app/uploads/${key}`, subject: 'auto', precision: 'standard', output_format: 'png' } as const;
    await assert.rejects(
      createTask(server.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 1, onCreate: (tx) => adoptUpload(tx, key) }),
      UploadDiscardedError,
      'the claim was committed before the file began to go',
    );
    hold.release();
    assert.equal((await sweep).orphanedUploads, 1);
    assert.equal(await stored(key), false);
    assert.deepEqual(await server.db.selectFrom('tasks').select('id').where('account_id', '=', account.id).execute(), []);
  });

  test('a create whose task was committed after all keeps its upload when the route cleans up after it', async () => {
    const key = await storeUpload({ db: server.db, uploads }, photo.data);
    const account = await createAccount(server.db, { email: uniqueEmail(), plan: 'free', credits: 1 });
    const input = { image_url: `${server.url}/app/uploads/${key}`, subject: 'auto', precision: 'standard', output_format: 'png' } as const;
    await createTask(server.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 1, onCreate: (tx) => adoptUpload(tx, key) });
    // As after a commit whose reply was lost: the route saw an error and discards the upload.
    await discardUpload({ db: server.db, uploads }, key, logger);
    assert.equal(await stored(key), true, 'the task owns it');
    assert.deepEqual(warnings, []);
  });

  test('the remove form answers 409 and asks for the file again when maintenance took its upload first', async () => {
    const { client, accountId } = await signedUp(1);
    const folder = path.join(server.dataDir, 'uploads');
    const before = fs.readdirSync(folder).sort();
    // As when maintenance runs on a clock an hour or more ahead: each upload is claimed as soon as it is recorded.
    if (engine === 'sqlite') {
      await sql`create trigger claim_at_once after insert on pending_uploads begin update pending_uploads set claimed_at = new.created_at where upload_key = new.upload_key; end`.execute(server.db);
    } else {
      await sql`create function claim_at_once() returns trigger language plpgsql as $$ begin new.claimed_at := new.created_at; return new; end $$`.execute(server.db);
      await sql`create trigger claim_at_once before insert on pending_uploads for each row execute function claim_at_once()`.execute(server.db);
    }
    try {
      const { response, body } = await client.post('/app/removals', fields, photo);
      assert.equal(response.status, 409);
      assert.match(body, /The upload took too long and was discarded\. Choose the file again\./);
    } finally {
      await sql`drop trigger claim_at_once${sql.raw(engine === 'postgres' ? ' on pending_uploads' : '')}`.execute(server.db);
      if (engine === 'postgres') await sql`drop function claim_at_once()`.execute(server.db);
    }
    assert.deepEqual(await server.db.selectFrom('tasks').select('id').where('account_id', '=', accountId).execute(), [], 'no task was made');
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 1, 'nothing was reserved');
    assert.deepEqual(fs.readdirSync(folder).sort(), before, 'the upload was deleted at once');
    assert.deepEqual(await pendingKeys(), []);
  });
});
