// The history list's thumbnails of results in a bucket: made by the API process from the object
// (the browser is never sent to the full-resolution result), kept in memory like those of results
// on disk, and never shown once the row says the result is deleted or to anyone but its owner. A
// bucket that fails costs a missing thumbnail, not a server error or a redirect.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import sharp from 'sharp';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
import { bucketOutage } from '../../src/web/thumbnails.ts';
import { describeEachEngine } from '../support/engines.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.ts';
import { assertServedFromMemory, fetchThumbnail, watchDecodes, type Thumbnail } from './thumbnail-requests.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

const hourMs = 3_600_000;
/** Small enough that an object over its bound is a few MB; the results here are 0.3 megapixels. */
const maxPixels = 400_000;

interface Warning {
  msg: string;
  taskId?: string;
  err?: { message: string };
}

// The service reaches the bucket through a gate the outage tests shut; the tests themselves put
// and delete objects straight in the bucket.
describeEachEngine('thumbnails of results in a bucket (s3rver on loopback)', (engine) => {
  let s3: S3Server;
  let gate: TcpGate;
  let server: TestServer;
  let bucket: S3ResultStore;
  let small: Buffer;
  const warnings: Warning[] = [];

  before(async () => {
    s3 = await startS3Server();
    gate = await startTcpGate(Number(new URL(s3.endpoint).port));
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as Warning) });
    server = await startTestServer(
      {
        ...s3.env,
        CUTOUT_S3_ENDPOINT: `http://127.0.0.1:${gate.port}`,
        CUTOUT_S3_TIMEOUT_SECONDS: '1',
        CUTOUT_MAX_PIXELS: String(maxPixels),
        CUTOUT_WEB_FREE_CREDITS: '20',
      },
      { engine, logger },
    );
    if (!server.config.s3) throw new Error('the S3 settings were not applied');
    bucket = new S3ResultStore({ ...server.config.s3, endpoint: s3.endpoint }, 900);
    small = await sharp({ create: { width: 640, height: 480, channels: 4, background: { r: 200, g: 40, b: 40, alpha: 0.5 } } }).png().toBuffer();
  });
  // A test that leaves the bucket failed leaves the pause after it too; the next starts without.
  afterEach(() => bucketOutage.over());
  after(async () => {
    bucket.close();
    await server.close();
    await gate.close();
    await s3.close();
  });

  async function signedIn(): Promise<WebClient> {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/remove');
    return client;
  }

  /** A task of the client's account that succeeded with `data` as its result object (none when undefined). */
  async function succeededTask(client: WebClient, data: Buffer | undefined): Promise<{ taskId: string; resultKey: string }> {
    const created = await client.post('/app/removals', { image_url: 'https://example.com/a.jpg' });
    assert.equal(created.response.status, 303);
    const taskId = (created.response.headers.get('location') ?? '').split('/').pop() ?? '';
    const resultKey = `${taskId}-1.png`;
    if (data) await bucket.put(resultKey, data);
    await server.db.updateTable('tasks').set({ status: 'succeeded', result_key: resultKey, claims: 1, finished_at: Date.now() }).where('id', '=', taskId).execute();
    return { taskId, resultKey };
  }

  const thumbnail = (client: WebClient, taskId: string) => fetchThumbnail(server.url, client, taskId);

  const warningsFor = (taskId: string) => warnings.filter((w) => w.taskId === taskId);

  test('the thumbnail is a 96-pixel WebP made from the object, not a redirect to the full image', async () => {
    const client = await signedIn();
    const { taskId } = await succeededTask(client, small);
    const answer = await thumbnail(client, taskId);
    assert.deepEqual([answer.status, answer.type, answer.cacheControl, answer.location], [200, 'image/webp', 'private, max-age=3600', null]);
    const meta = await sharp(answer.bytes).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height, meta.hasAlpha], ['webp', 96, 72, true]);
    // The object's colour, scaled down.
    const { channels } = await sharp(answer.bytes).stats();
    assert.deepEqual(channels.map((c) => Math.round(c.mean / 10)), [20, 4, 4, 13]);
    assert.ok(answer.bytes.length < small.length, 'a few KB, not the result');
  });

  test('a thumbnail asked for again is answered from memory: the object deleted from the bucket meanwhile, the same bytes come back', async () => {
    const client = await signedIn();
    const { taskId, resultKey } = await succeededTask(client, small);
    await assertServedFromMemory(() => thumbnail(client, taskId), () => bucket.delete(resultKey));
  });

  test('a result whose object is missing from the bucket has no thumbnail (404), and no warning is logged', async () => {
    const client = await signedIn();
    const { taskId } = await succeededTask(client, undefined);
    const answer = await thumbnail(client, taskId);
    assert.equal(answer.status, 404);
    assert.notEqual(answer.type, 'image/webp');
    assert.equal(answer.location, null);
    assert.deepEqual(warningsFor(taskId), []);
  });

  test('once retention marks the result deleted, its cached thumbnail answers 404', async () => {
    const client = await signedIn();
    const { taskId } = await succeededTask(client, small);
    assert.equal((await thumbnail(client, taskId)).status, 200);

    await server.db.updateTable('tasks').set({ finished_at: Date.now() - 25 * hourMs }).where('id', '=', taskId).execute();
    assert.ok((await server.maintenance.run()).resultsDeleted >= 1);
    const row = await server.db.selectFrom('tasks').select('result_deleted_at').where('id', '=', taskId).executeTakeFirstOrThrow();
    assert.notEqual(row.result_deleted_at, null);

    const gone = await thumbnail(client, taskId);
    assert.equal(gone.status, 404);
    assert.notEqual(gone.type, 'image/webp');
  });

  test("another account gets 404 for a task's thumbnail, cached or not", async () => {
    const owner = await signedIn();
    const stranger = await signedIn();
    const { taskId } = await succeededTask(owner, small);
    const before = await thumbnail(stranger, taskId);
    assert.deepEqual([before.status, before.location], [404, null], 'before it is cached');
    assert.equal((await thumbnail(owner, taskId)).status, 200);
    const cached = await thumbnail(stranger, taskId);
    assert.equal(cached.status, 404, 'once cached');
    assert.notEqual(cached.type, 'image/webp');
  });

  test('with the bucket refusing connections the thumbnail is a 404 with a warning, not a server error or a redirect; it shows once the bucket is back', async () => {
    const client = await signedIn();
    const { taskId } = await succeededTask(client, small);
    gate.shut();
    try {
      const answer = await thumbnail(client, taskId);
      assert.deepEqual([answer.status, answer.location], [404, null]);
      assert.match(answer.type ?? '', /^text\/html/);
    } finally {
      gate.open();
    }
    assert.deepEqual(warningsFor(taskId).map((w) => w.msg), ['a result could not be read for its thumbnail']);
    // The outage is not remembered as a missing result: once the bucket is back (and the pause
    // after a failure is over) the thumbnail is made.
    bucketOutage.over();
    assert.equal((await thumbnail(client, taskId)).status, 200);
  });

  test('a bucket that never answers holds one thumbnail for its timeout, and the rest of the page are answered 404 without waiting in turn', async () => {
    const client = await signedIn();
    const tasks = [];
    for (let i = 0; i < 5; i++) tasks.push(await succeededTask(client, small));
    gate.silence();
    const connectionsBefore = gate.refused;
    const started = Date.now();
    let answers: Thumbnail[];
    try {
      answers = await Promise.all(tasks.map(({ taskId }) => thumbnail(client, taskId)));
    } finally {
      gate.open();
    }
    const elapsed = Date.now() - started;
    assert.deepEqual(answers.map((a) => a.status), Array(5).fill(404));
    // One request to the bucket, cut at CUTOUT_S3_TIMEOUT_SECONDS (1 s) without the SDK's further
    // attempts; not one for each thumbnail in turn.
    assert.equal(gate.refused - connectionsBefore, 1, 'one connection to the bucket');
    assert.ok(elapsed >= 900 && elapsed < 5000, `answered in ${elapsed} ms`);
    assert.equal(tasks.flatMap(({ taskId }) => warningsFor(taskId)).length, 1, 'one warning for the outage');

    bucketOutage.over();
    const back = await Promise.all(tasks.map(({ taskId }) => thumbnail(client, taskId)));
    assert.deepEqual(back.map((a) => a.status), Array(5).fill(200));
  });

  test('an object larger than any result of the pixel cap is refused by its length, without being decoded', async () => {
    const client = await signedIn();
    // Over 10 bytes a pixel (plus headers) at CUTOUT_MAX_PIXELS: no PNG or WebP the service writes.
    const { taskId } = await succeededTask(client, randomBytes(maxPixels * 10 + 128 * 1024));
    const count = watchDecodes();
    try {
      const answer = await thumbnail(client, taskId);
      assert.deepEqual([answer.status, answer.location], [404, null]);
      assert.equal(count.decodes, 0);
    } finally {
      count.stop();
    }
    const [warning] = warningsFor(taskId);
    assert.equal(warning?.msg, 'a result does not decode for its thumbnail');
    assert.match(warning?.err?.message ?? '', /more than one of at most 400000 pixels can take/);
  });
});
