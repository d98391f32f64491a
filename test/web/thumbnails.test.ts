// The history list's thumbnails of results on local disk: each is made once and kept in memory,
// made one at a time however many are asked for, and never shown once the task row says the
// result is deleted or to anyone but the task's owner.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pino from 'pino';
import sharp from 'sharp';
import { DiskResultStore } from '../../src/storage/disk-result-store.ts';
import { ByteBoundedCache, OneAtATime, thumbnailMaxWaiting, thumbnailQueue } from '../../src/web/thumbnails.ts';
import { Maintenance } from '../../src/worker/maintenance.ts';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { assertServedFromMemory, fetchThumbnail, holdDecodes, until, watchDecodes } from './thumbnail-requests.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

const hourMs = 3_600_000;

describeEachEngine('result thumbnails', (engine) => {
  let server: TestServer;
  let resultsDir: string;
  let small: Buffer;
  before(async () => {
    server = await startTestServer({ CUTOUT_WEB_FREE_CREDITS: '20' }, { engine });
    resultsDir = path.join(server.dataDir, 'results');
    small = await sharp({ create: { width: 640, height: 480, channels: 4, background: { r: 200, g: 40, b: 40, alpha: 0.5 } } }).png().toBuffer();
  });
  after(async () => server.close());

  async function signedIn(): Promise<WebClient> {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/remove');
    return client;
  }

  /** A task of the client's account that succeeded with `data` as its result file on disk. */
  async function succeededTask(client: WebClient, data: Buffer): Promise<{ taskId: string; file: string }> {
    const created = await client.post('/app/removals', { image_url: 'https://example.com/a.jpg' });
    assert.equal(created.response.status, 303);
    const taskId = (created.response.headers.get('location') ?? '').split('/').pop() ?? '';
    const resultKey = `${taskId}-1.png`;
    const file = path.join(resultsDir, resultKey);
    fs.writeFileSync(file, data);
    await server.db.updateTable('tasks').set({ status: 'succeeded', result_key: resultKey, claims: 1, finished_at: Date.now() }).where('id', '=', taskId).execute();
    return { taskId, file };
  }

  const thumbnail = (client: WebClient, taskId: string) => fetchThumbnail(server.url, client, taskId);

  test('a thumbnail asked for again is served from memory, without reading the result file', async () => {
    const client = await signedIn();
    const { taskId, file } = await succeededTask(client, small);
    // The file is gone, the row still says the result is kept: the row decides, as for downloads.
    const first = await assertServedFromMemory(() => thumbnail(client, taskId), () => fs.rmSync(file));
    const meta = await sharp(first.bytes).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 96, 72]);
  });

  test('requests for one thumbnail sent together decode its result once', async () => {
    const client = await signedIn();
    const { taskId } = await succeededTask(client, small);
    const watch = watchDecodes();
    try {
      const answers = await Promise.all(Array.from({ length: 4 }, () => thumbnail(client, taskId)));
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200]);
      assert.ok(answers.every((a) => a.bytes.equals(answers[0]?.bytes ?? Buffer.alloc(0))));
      assert.equal(watch.decodes, 1);
    } finally {
      watch.stop();
    }
  });

  test('once retention marks the result deleted, its cached thumbnail answers 404', async () => {
    const client = await signedIn();
    const { taskId, file } = await succeededTask(client, small);
    assert.equal((await thumbnail(client, taskId)).status, 200);
    fs.rmSync(file);
    assert.equal((await thumbnail(client, taskId)).status, 200, 'cached while the row keeps the result');

    await server.db.updateTable('tasks').set({ finished_at: Date.now() - 25 * hourMs }).where('id', '=', taskId).execute();
    const maintenance = new Maintenance(server.db, new DiskResultStore(resultsDir), server.config, pino({ level: 'silent' }));
    assert.equal((await maintenance.run()).resultsDeleted, 1);
    const row = await server.db.selectFrom('tasks').select('result_deleted_at').where('id', '=', taskId).executeTakeFirstOrThrow();
    assert.notEqual(row.result_deleted_at, null);

    const gone = await thumbnail(client, taskId);
    assert.equal(gone.status, 404);
    assert.notEqual(gone.type, 'image/webp');
  });

  test("another account gets 404 for a task's thumbnail, cached or not", async () => {
    const owner = await signedIn();
    const stranger = await signedIn();
    const { taskId, file } = await succeededTask(owner, small);
    assert.equal((await thumbnail(stranger, taskId)).status, 404, 'before it is cached');
    const mine = await thumbnail(owner, taskId);
    assert.equal(mine.status, 200);
    fs.rmSync(file);
    assert.ok((await thumbnail(owner, taskId)).bytes.equals(mine.bytes), 'cached for the owner');

    const theirs = await thumbnail(stranger, taskId);
    assert.equal(theirs.status, 404);
    assert.notEqual(theirs.type, 'image/webp');
    assert.equal((await thumbnail(new WebClient(server.url), taskId)).status, 303, 'signed out: sent to sign in');
  });

  test('a thumbnail whose browser left before its turn is never decoded', async () => {
    const client = await signedIn();
    const first = await succeededTask(client, small);
    const left = await succeededTask(client, small);
    const hold = holdDecodes();
    try {
      const waiting = thumbnail(client, first.taskId);
      await until(() => hold.started === 1);
      // The second thumbnail's request waits its turn, then its browser goes away.
      const cookie = client.cookieHeader();
      const { port } = new URL(server.url);
      const accepted = new Promise<net.Socket>((resolve) => server.app.server.once('connection', resolve));
      const socket = net.connect(Number(port), '127.0.0.1', () =>
        socket.write(`GET /app/tasks/${left.taskId}/thumbnail HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\n\r\n`),
      );
      socket.on('error', () => {});
      const serverSide = await accepted;
      assert.equal(serverSide.remotePort, socket.localPort, "the server's end of this browser's connection");
      await until(() => thumbnailQueue.pending === 1);
      // It has left once the server has read its leaving (a FIN, or a reset), not once this side
      // has closed: under load the first decode can end before the server reads it, and that turn
      // cannot know the browser has gone.
      const departed = new Promise((resolve) => {
        serverSide.once('end', resolve);
        serverSide.once('close', resolve);
      });
      socket.destroy();
      await departed;
      hold.release();
      assert.equal((await waiting).status, 200);
      await until(() => thumbnailQueue.active === 0 && thumbnailQueue.pending === 0);
      assert.equal(hold.started, 1, 'the abandoned one was skipped');
    } finally {
      hold.release();
      hold.stop();
    }
  });

  test(`past ${thumbnailMaxWaiting} thumbnails waiting, another is answered 503 at once`, async () => {
    const client = await signedIn();
    const { taskId } = await succeededTask(client, small);
    const hold = holdDecodes();
    try {
      const first = thumbnail(client, taskId);
      await until(() => hold.started === 1);
      const queued = Array.from({ length: thumbnailMaxWaiting }, () => thumbnail(client, taskId));
      await until(() => thumbnailQueue.pending === thumbnailMaxWaiting);
      // Either it is answered at once, or it joins the queue (which the race then sees).
      const extra = thumbnail(client, taskId);
      let answered = false;
      const joined = until(() => answered || thumbnailQueue.pending > thumbnailMaxWaiting).then(() => 'queued' as const);
      const outcome = await Promise.race([extra, joined]);
      answered = true;
      if (outcome === 'queued') assert.fail('it must not wait behind the others');
      assert.equal(outcome.status, 503);
      hold.release();
      await extra;
      const answers = await Promise.all([first, ...queued]);
      assert.ok(answers.every((a) => a.status === 200));
      assert.equal(hold.started, 1, 'the ones that waited took the thumbnail the first one made');
    } finally {
      hold.release();
      hold.stop();
    }
  });

  test('many thumbnails of large results asked for at once are decoded one at a time', async () => {
    const client = await signedIn();
    // 12 megapixels with alpha, as a full-resolution result: tens of MB to decode each.
    const large = await sharp({ create: { width: 4000, height: 3000, channels: 4, background: { r: 20, g: 120, b: 200, alpha: 0.75 } } }).png().toBuffer();
    const tasks = [];
    for (let i = 0; i < 6; i++) tasks.push(await succeededTask(client, large));
    const watch = watchDecodes();
    try {
      const answers = await Promise.all(tasks.map(({ taskId }) => thumbnail(client, taskId)));
      assert.deepEqual(answers.map((a) => a.status), Array(6).fill(200));
      for (const answer of answers) {
        const meta = await sharp(answer.bytes).metadata();
        assert.deepEqual([meta.width, meta.height], [96, 72]);
      }
      assert.equal(watch.decodes, 6);
      assert.equal(watch.peak, 1, 'at most one decode at a time');
      assert.ok(watch.peakWaiting >= 1, 'the requests overlapped: some waited their turn');
      assert.deepEqual([thumbnailQueue.active, thumbnailQueue.pending], [0, 0]);
    } finally {
      watch.stop();
    }
  });
});

test('the cache keeps at most its byte bound, forgetting the least recently used thumbnail first', () => {
  const cache = new ByteBoundedCache(10);
  cache.set('a', Buffer.alloc(4));
  cache.set('b', Buffer.alloc(4));
  assert.ok(cache.get('a'));
  cache.set('c', Buffer.alloc(4));
  assert.deepEqual([cache.get('a')?.length, cache.get('b'), cache.get('c')?.length, cache.bytes], [4, undefined, 4, 8]);
  cache.set('huge', Buffer.alloc(11));
  assert.deepEqual([cache.get('huge'), cache.bytes], [undefined, 8]);
});

test('a job that fails does not hold up the ones queued behind it', async () => {
  const queue = new OneAtATime();
  const failing = queue.run(async () => {
    throw new Error('does not decode');
  });
  const next = queue.run(async () => 'made');
  assert.equal(queue.pending, 2);
  await assert.rejects(failing, /does not decode/);
  assert.equal(await next, 'made');
  assert.deepEqual([queue.active, queue.pending], [0, 0]);
});
