import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { findAccount, listLedger } from '../../src/store/accounts-repository.ts';
import { groundTruth, iou } from '../support/fixtures.ts';
import { fixtureImage, startImageServer, type ImageServer } from '../support/image-server.ts';
import { waitForFinal } from '../support/poll.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

describeEachEngine('a removal from request to downloaded cutout (real model)', (engine) => {
  let images: ImageServer;
  let server: TestServer;

  before(async () => {
    images = await startImageServer();
    server = await startTestServer(
      { CUTOUT_RATE_LIMIT_PER_MINUTE: '100000', CUTOUT_MAX_ACTIVE_TASKS: '50', CUTOUT_FETCH_MAX_BYTES: String(4 * 1024 * 1024), CUTOUT_FETCH_TIMEOUT_SECONDS: '10' },
      { worker: true, engine },
    );
  });
  after(async () => {
    await server.close();
    await images.close();
  });

  async function createTask(key: string, body: Record<string, unknown>): Promise<{ id: string; status: string }> {
    const res = await server.request('/api/v1/bg/removals', { ...createBody(body), key });
    assert.equal(res.status, 202);
    return (await res.json()) as { id: string; status: string };
  }
  async function create(key: string, body: Record<string, unknown>): Promise<string> {
    return (await createTask(key, body)).id;
  }

  test('a PNG task goes queued → processing → succeeded, is charged 1 credit, and downloads at full size with alpha', async () => {
    const { key, accountId } = await server.account({ credits: 10 });
    const source = await sharp(fixtureImage('davis-libby-00019.jpg')).metadata();
    const created = await createTask(key, { image_url: `${images.url}/fixtures/davis-libby-00019.jpg` });
    const id = created.id;
    assert.equal(created.status, 'queued');
    const { task, seen } = await waitForFinal(server, key, id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    // The worker may claim the task before the first poll, so polls see a suffix of the life cycle.
    const lifeCycle = ['queued', 'processing', 'succeeded'];
    assert.ok(seen.includes('processing'), `saw ${seen.join(' → ')}`);
    assert.deepEqual(seen, lifeCycle.slice(lifeCycle.indexOf(seen[0] ?? '')));
    assert.ok(Date.parse(task.updated_at) > Date.parse(task.created_at), 'updated_at moves with the status');
    assert.deepEqual(task.usage, { credits: 1 });
    assert.equal(task.error, null);
    assert.equal(task.output?.format, 'png');
    assert.equal(task.output?.width, source.width);
    assert.equal(task.output?.height, source.height);

    const download = await fetch(task.output?.url ?? '');
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'image/png');
    const bytes = Buffer.from(await download.arrayBuffer());
    const png = sharp(bytes);
    const meta = await png.metadata();
    assert.equal(meta.format, 'png');
    assert.equal(meta.width, source.width);
    assert.equal(meta.height, source.height);
    assert.equal(meta.channels, 4);
    // stats() describes the input image, whatever operations are chained before it: read channel 3 from it.
    const alpha = (await png.stats()).channels[3];
    assert.equal(alpha?.min, 0, 'the background is transparent');
    assert.equal(alpha?.max, 255, 'the subject is opaque');
    const alphaBytes = await sharp(bytes).extractChannel(3).raw().toBuffer();
    const score = iou(alphaBytes, await groundTruth('davis-libby-00019'));
    assert.ok(score >= 0.7, `the cutout's alpha matches the ground truth (IoU ${score.toFixed(3)})`);

    const account = await findAccount(server.db, accountId);
    assert.equal(account?.creditsAvailable, 9);
    assert.equal(account?.creditsReserved, 0);
    const kinds = (await listLedger(server.db, accountId)).filter((e) => e.taskId === id).map((e) => e.kind);
    assert.deepEqual(kinds, ['reserve', 'charge']);
  });

  test('a high-precision WebP task is charged 2 credits and returns lossless WebP with alpha', async () => {
    const { key, accountId } = await server.account({ credits: 10 });
    const id = await create(key, { image_url: `${images.url}/fixtures/am-gt07.png`, precision: 'hd', output_format: 'webp' });
    const { task } = await waitForFinal(server, key, id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    assert.equal(task.input.precision, 'high');
    assert.deepEqual(task.usage, { credits: 2 });
    const download = await fetch(task.output?.url ?? '');
    assert.equal(download.headers.get('content-type'), 'image/webp');
    const meta = await sharp(Buffer.from(await download.arrayBuffer())).metadata();
    assert.equal(meta.format, 'webp');
    assert.equal(meta.hasAlpha, true);
    assert.equal(meta.width, 800);
    assert.equal(meta.height, 618);
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 8);
  });

  const failures: [string, string, string][] = [
    ['a 404 image', '/missing.png', 'image_download_failed'],
    ['a page that is not an image', '/text', 'unsupported_image'],
    ['an SVG', '/vector.svg', 'unsupported_image'],
    ['an endless body', '/endless', 'image_too_large'],
    ['a redirect loop', '/loop', 'image_download_failed'],
  ];
  for (const [label, route, code] of failures) {
    test(`${label} fails the task with ${code} and refunds its credits`, async () => {
      const { key, accountId } = await server.account({ credits: 5 });
      const id = await create(key, { image_url: `${images.url}${route}` });
      const { task } = await waitForFinal(server, key, id);
      assert.equal(task.status, 'failed');
      assert.equal(task.error?.code, code);
      assert.ok(task.error?.message);
      assert.equal(task.output, null);
      assert.equal(task.usage, null);
      const account = await findAccount(server.db, accountId);
      assert.equal(account?.creditsAvailable, 5);
      assert.equal(account?.creditsReserved, 0);
      const kinds = (await listLedger(server.db, accountId)).filter((e) => e.taskId === id).map((e) => e.kind);
      assert.deepEqual(kinds, ['reserve', 'refund']);
    });
  }
});
