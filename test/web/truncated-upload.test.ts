// An upload that does not decode to its end (a cut-off download, a broken copy) is refused before a
// task is made or a credit held; an original that breaks afterwards shows the app's page, not a 500.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { findAccount } from '../../src/store/accounts-repository.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

let server: TestServer;
let whole: Buffer;
before(async () => {
  server = await startTestServer({ CUTOUT_WEB_FREE_CREDITS: '5' });
  whole = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#c33' } }).jpeg().toBuffer();
});
after(async () => server.close());

async function signedIn(): Promise<{ client: WebClient; accountId: string }> {
  const client = new WebClient(server.url);
  const email = uniqueEmail();
  await client.signUp(email, goodPassword);
  await client.get('/app/remove');
  const { id } = await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  return { client, accountId: id };
}

test('a JPEG cut off halfway is refused with the form message; no task, no charge, no stored upload', async () => {
  const { client, accountId } = await signedIn();
  const { response, body } = await client.post('/app/removals', {}, { name: 'a.jpg', data: whole.subarray(0, Math.floor(whole.length / 2)), type: 'image/jpeg' });
  assert.equal(response.status, 400);
  assert.match(body, /That file cannot be used: the image data is incomplete or damaged\./);
  assert.equal((await server.db.selectFrom('tasks').select('id').execute()).length, 0);
  assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 5);
  assert.deepEqual(fs.readdirSync(path.join(server.dataDir, 'uploads')).filter((f) => f.startsWith('upl_')), []);
});

test('an uploaded original damaged after upload answers 422 with the app page when viewed', async () => {
  const { client } = await signedIn();
  const created = await client.post('/app/removals', {}, { name: 'a.jpg', data: whole, type: 'image/jpeg' });
  assert.equal(created.response.status, 303);
  const page = await client.get(created.response.headers.get('location') ?? '');
  const viewer = new URL(/data-before src="([^"]+)"/.exec(page.body)?.[1] ?? '').pathname;
  const key = viewer.split('/').pop() ?? '';
  fs.writeFileSync(path.join(server.dataDir, 'uploads', key), whole.subarray(0, Math.floor(whole.length / 2)));
  const { response, body } = await client.get(viewer);
  assert.equal(response.status, 422);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(body, /cannot be shown/);
});

test("a result damaged on disk gets no thumbnail (404), not a server error", async () => {
  const { client } = await signedIn();
  const created = await client.post('/app/removals', { image_url: 'https://example.com/a.jpg' });
  const taskId = (created.response.headers.get('location') ?? '').split('/').pop() ?? '';
  const resultKey = `${taskId}.png`;
  fs.writeFileSync(path.join(server.dataDir, 'results', resultKey), whole.subarray(0, 100));
  await server.db.updateTable('tasks').set({ status: 'succeeded', result_key: resultKey }).where('id', '=', taskId).execute();
  const { response } = await client.get(`/app/tasks/${taskId}/thumbnail`);
  assert.equal(response.status, 404);
});
