// An upload's input.image_url is built from the server's own address, as result links are, never
// from the Host header a client sent: a forged Host does not end up in the task or the API's answer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({});
});
after(async () => server.close());

/** fetch() will not send another Host, so the upload is posted with node's http client. */
function postWithHost(url: string, host: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers: { ...headers, host } }, (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, location: response.headers.location });
    });
    request.on('error', reject);
    request.end(body);
  });
}

test('an upload posted with a forged Host header stores the server URL in input.image_url', async () => {
  const client = new WebClient(server.url);
  await client.signUp(uniqueEmail(), goodPassword);
  await client.get('/app/remove');
  const form = new FormData();
  form.append('_csrf', client.csrf);
  form.append('file', new Blob([new Uint8Array(await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3c3' } }).png().toBuffer())], { type: 'image/png' }), 'a.png');
  const encoded = new Response(form);
  const body = Buffer.from(await encoded.arrayBuffer());
  const cookie = client.cookieHeader();
  const posted = await postWithHost(`${server.url}/app/removals`, 'attacker.example', { cookie, 'content-type': encoded.headers.get('content-type') ?? '' }, body);
  assert.equal(posted.status, 303);
  const taskId = posted.location?.split('/').pop() ?? '';
  const task = await server.db.selectFrom('tasks').select('image_url').where('id', '=', taskId).executeTakeFirstOrThrow();
  assert.match(task.image_url, new RegExp(`^${server.url}/app/uploads/upl_`));
});
