// Removing a background from the web app over HTTP, with the real worker and model: uploads and
// pasted URLs become tasks of the account, charged from the same balance and visible to the API.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { findAccount, grantCredits, listLedger } from '../../src/store/accounts-repository.ts';
import { createApiKey } from '../../src/store/api-keys-repository.ts';
import { DiskUploadStore, isUploadKey } from '../../src/storage/upload-store.ts';
import { runWebMaintenance } from '../../src/web/web-maintenance.ts';
import { fixtureImage, startImageServer, type ImageServer } from '../support/image-server.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

interface Status {
  status: string;
  label: string;
  credits: number;
  result: { url: string; width: number; height: number; format: string } | null;
  error: { code: string } | null;
  balanceLabel: string;
}

describe('removing a background in the web app (real model)', () => {
  let server: TestServer;
  let images: ImageServer;

  before(async () => {
    images = await startImageServer();
    server = await startTestServer({ CUTOUT_WEB_FREE_CREDITS: '2', CUTOUT_RATE_LIMIT_PER_MINUTE: '10000' }, { worker: true });
  });
  after(async () => {
    await server.close();
    await images.close();
  });

  async function signedUp(): Promise<{ client: WebClient; accountId: string }> {
    const client = new WebClient(server.url);
    const email = uniqueEmail();
    await client.signUp(email, goodPassword);
    await client.get('/app/remove');
    const row = await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    return { client, accountId: row.id };
  }

  async function waitForWebTask(client: WebClient, taskPath: string): Promise<Status> {
    const until = Date.now() + 120_000;
    while (Date.now() < until) {
      const status = JSON.parse((await client.get(`${taskPath}/status`)).body) as Status;
      if (status.status === 'succeeded' || status.status === 'failed') return status;
      await new Promise<void>((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${taskPath} did not finish`);
  }

  const options = { subject: 'product', precision: 'standard', output_format: 'png', image_url: '' };

  test('a free account uploads a photo and gets a preview of at most 0.25 MP with alpha, charged 1 credit', async () => {
    const { client, accountId } = await signedUp();
    const { response } = await client.post('/app/removals', options, { name: 'toy.png', data: fixtureImage('am-gt07.png'), type: 'image/png' });
    assert.equal(response.status, 303);
    const taskPath = response.headers.get('location') ?? '';
    assert.match(taskPath, /^\/app\/tasks\/bgr_[0-9a-z]{20}$/);
    const page = await client.get(taskPath);
    assert.match(page.body, /free-plan preview/);

    const status = await waitForWebTask(client, taskPath);
    assert.equal(status.status, 'succeeded', JSON.stringify(status.error));
    assert.equal(status.credits, 1);
    assert.equal(status.balanceLabel, '1 credit');
    const { width = 0, height = 0 } = status.result ?? {};
    assert.ok(width * height <= 250_000 && width * height > 240_000, `${width}×${height}`);
    const cutout = sharp(Buffer.from(await (await fetch(status.result?.url ?? '')).arrayBuffer()));
    const meta = await cutout.metadata();
    assert.deepEqual([meta.format, meta.width, meta.height, meta.channels], ['png', width, height, 4]);
    const alpha = (await cutout.extractChannel(3).stats()).channels[0];
    assert.deepEqual([alpha?.min, alpha?.max], [0, 255]);

    const account = await findAccount(server.db, accountId);
    assert.deepEqual([account?.creditsAvailable, account?.creditsReserved], [1, 0]);
    const taskId = taskPath.split('/').pop() ?? '';
    assert.deepEqual((await listLedger(server.db, accountId)).filter((e) => e.taskId === taskId).map((e) => e.kind), ['reserve', 'charge']);

    // The upload is shown to its owner only; the task's image_url points at it.
    const source = await server.db.selectFrom('web_task_sources').selectAll().where('task_id', '=', taskId).executeTakeFirstOrThrow();
    assert.ok(source.upload_key && isUploadKey(source.upload_key));
    assert.equal(Number(source.max_pixels), 250_000);
    const original = await client.get(`/app/uploads/${source.upload_key}`);
    assert.equal(original.response.status, 200);
    assert.equal(original.response.headers.get('content-type'), 'image/webp');
    const thumbnail = await client.get(`/app/tasks/${taskId}/thumbnail`);
    assert.equal(thumbnail.response.status, 200);
    const stranger = (await signedUp()).client;
    assert.equal((await stranger.get(`/app/uploads/${source.upload_key}`)).response.status, 404);
    assert.equal((await stranger.get(`/app/tasks/${taskId}`)).response.status, 404);
    assert.equal((await stranger.get(`/app/tasks/${taskId}/thumbnail`)).response.status, 404);
    assert.equal((await new WebClient(server.url).get(`/app/uploads/${source.upload_key}`)).response.status, 303);

    // Through the API, once the account may use it, the same task with the same charge.
    await grantCredits(server.db, accountId, 5, true);
    const { key } = await createApiKey(server.db, accountId, 'check');
    const viaApi = (await (await server.request(`/api/v1/bg/removals/${taskId}`, { key })).json()) as { status: string; usage: unknown; input: { image_url: string } };
    assert.equal(viaApi.status, 'succeeded');
    assert.deepEqual(viaApi.usage, { credits: 1 });
    assert.equal(viaApi.input.image_url, `${server.url}/app/uploads/${source.upload_key}`);

    // Past the retention period the upload is deleted with the result.
    await server.db.updateTable('tasks').set({ finished_at: Date.now() - 25 * 3_600_000 }).where('id', '=', taskId).execute();
    const purged = await runWebMaintenance({ db: server.db, uploads: new DiskUploadStore(path.join(server.dataDir, 'uploads')), config: server.config });
    assert.equal(purged.uploads, 1);
    assert.equal(fs.existsSync(path.join(server.dataDir, 'uploads', source.upload_key)), false);
    assert.equal((await client.get(`/app/uploads/${source.upload_key}`)).response.status, 404);
  });

  test('an account with API access pastes a URL and gets full resolution; API tasks show in the history too', async () => {
    const { client, accountId } = await signedUp();
    await grantCredits(server.db, accountId, 10, true);
    const imageUrl = `${images.url}/fixtures/horse-306.png`;
    // As a browser sends it: the file input left empty is an empty part with no file name.
    const { response } = await client.post('/app/removals', { ...options, subject: 'auto', image_url: imageUrl, output_format: 'webp' }, { name: '', data: Buffer.alloc(0), type: 'application/octet-stream' });
    assert.equal(response.status, 303);
    const taskPath = response.headers.get('location') ?? '';
    const status = await waitForWebTask(client, taskPath);
    assert.equal(status.status, 'succeeded', JSON.stringify(status.error));
    assert.deepEqual([status.result?.width, status.result?.height, status.result?.format], [350, 300, 'webp']);

    const { key } = await createApiKey(server.db, accountId, 'api');
    const created = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: `${images.url}/fixtures/horse-279.png` }), key });
    assert.equal(created.status, 202);
    const apiTask = (await created.json()) as { id: string };
    const history = await client.get('/app/history');
    const rows = history.body.split('data-testid="history-row"').slice(1);
    assert.equal(rows.length, 2);
    assert.match(rows[0] ?? '', new RegExp(`${apiTask.id}[\\s\\S]*>API<`));
    assert.match(rows[1] ?? '', new RegExp(`${taskPath.split('/').pop()}[\\s\\S]*>Web<[\\s\\S]*succeeded[\\s\\S]*1 charged[\\s\\S]*WEBP`));
    const viaApi = (await (await server.request(`/api/v1/bg/removals/${taskPath.split('/').pop()}`, { key })).json()) as { input: { image_url: string } };
    assert.equal(viaApi.input.image_url, imageUrl);
  });

  test('a file that is not an image, or no image at all, is refused with a clear message and costs nothing', async () => {
    const { client, accountId } = await signedUp();
    const notImage = await client.post('/app/removals', options, { name: 'notes.png', data: Buffer.from('just some text'), type: 'image/png' });
    assert.equal(notImage.response.status, 400);
    assert.match(notImage.body, /That file cannot be used: The data is not a recognisable image/);
    const svg = await client.post('/app/removals', options, { name: 'a.svg', data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'), type: 'image/svg+xml' });
    assert.equal(svg.response.status, 400);
    assert.match(svg.body, /SVG images are not supported/);
    const nothing = await client.post('/app/removals', options);
    assert.equal(nothing.response.status, 400);
    assert.match(nothing.body, /Choose or drop an image file, or paste an image URL/);
    const badUrl = await client.post('/app/removals', { ...options, image_url: 'ftp://example.test/a.png' });
    assert.equal(badUrl.response.status, 400);
    assert.match(badUrl.body, /absolute http or https URL/);
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 2);
    assert.equal((await server.db.selectFrom('tasks').select('id').where('account_id', '=', accountId).execute()).length, 0);
  });

  test('a URL that cannot be downloaded fails the web task with its reason and refunds it', async () => {
    const { client, accountId } = await signedUp();
    const { response } = await client.post('/app/removals', { ...options, image_url: `${images.url}/missing.png` });
    const status = await waitForWebTask(client, response.headers.get('location') ?? '');
    assert.equal(status.status, 'failed');
    assert.equal(status.error?.code, 'image_download_failed');
    assert.match(status.label, /^Failed: .*credits were refunded\.$/);
    assert.equal(status.result, null);
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 2);
  });

  test('without enough credits the form says so and keeps no upload', async () => {
    const { client, accountId } = await signedUp();
    const uploads = path.join(server.dataDir, 'uploads');
    const before = fs.readdirSync(uploads).length;
    const res = await client.post('/app/removals', { ...options, precision: 'high' }, { name: 'h.png', data: fixtureImage('horse-279.png'), type: 'image/png' });
    assert.equal(res.response.status, 303, 'two free credits cover one high-precision task');
    const again = await client.post('/app/removals', options, { name: 'h.png', data: fixtureImage('horse-279.png'), type: 'image/png' });
    assert.equal(again.response.status, 402);
    assert.match(again.body, /needs 1 credit; the account does not have enough\. See Credits/);
    assert.equal(fs.readdirSync(uploads).length, before + 1);
    await waitForWebTask(client, res.response.headers.get('location') ?? '');
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 0);
  });
});
