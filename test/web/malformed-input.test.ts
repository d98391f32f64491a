// What a signed-in browser may put in a URL or a form that names nothing, cannot be stored or would
// be fetched as another address: the app answers as for any unknown page or bad form, on both
// databases, never with a server error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describeEachEngine('web app input that names nothing', (engine) => {
  let server: TestServer;
  let client: WebClient;

  before(async () => {
    server = await startTestServer({}, { engine });
    client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
  });
  after(async () => server.close());

  for (const [label, id] of [
    ['a NUL character', 'bgr_%00'],
    ['a control character', 'bgr_aaaaaaaaaaaaaaaaaaa%01'],
    ['the wrong prefix', 'acct_aaaaaaaaaaaaaaaaaaaa'],
  ] as const) {
    test(`a task page, its status and its thumbnail for an id with ${label} answer 404`, async () => {
      for (const suffix of ['', '/status', '/thumbnail']) {
        const { response, body } = await client.get(`/app/tasks/${id}${suffix}`);
        assert.equal(response.status, 404, `${suffix || 'page'}: ${body}`);
      }
    });
  }

  test('an API key name with a control character is refused with the form message and makes no key', async () => {
    await client.get('/app/settings/keys');
    const { response, body } = await client.post('/app/settings/keys', { name: 'shop\u0000backend' });
    assert.equal(response.status, 400);
    assert.match(body, /Give the key a name \(1–100 characters, no control characters\)/);
    assert.equal((await server.db.selectFrom('api_keys').select('id').execute()).length, 0);
  });

  // The form checks a pasted image URL with the API's rule: one a URL parser would repair into
  // another address is refused, not stored as typed while another address is fetched.
  for (const [label, url, message] of [
    ['http:x', 'http:x', /image_url must begin with http:\/\/ or https:\/\/ followed by the host/],
    ['a backslash', 'http:\\\\example.com\\a.jpg', /image_url must not contain a backslash/],
  ] as const) {
    test(`a pasted image URL with ${label} is refused with the form message and makes no task`, async () => {
      const tasks = async () => (await server.db.selectFrom('tasks').select('id').execute()).length;
      const before = await tasks();
      await client.get('/app/remove');
      const { response, body } = await client.post('/app/removals', { image_url: url });
      assert.equal(response.status, 400);
      assert.match(body, message);
      assert.equal(await tasks(), before);
    });
  }

  test('a pasted image URL with an upper-case HTTPS:// scheme is still accepted, and stored as typed', async () => {
    await client.get('/app/remove');
    const url = 'HTTPS://example.com/a.jpg';
    const { response } = await client.post('/app/removals', { image_url: url });
    assert.equal(response.status, 303);
    const taskId = (response.headers.get('location') ?? '').split('/').pop() ?? '';
    assert.equal((await server.db.selectFrom('tasks').select('image_url').where('id', '=', taskId).executeTakeFirstOrThrow()).image_url, url);
  });

  test('a JSON body that is not UTF-8, sent to a form, is refused as the request\'s fault, not answered as a server error', async () => {
    const body = Buffer.from('{"email":"\xe9"}', 'latin1');
    const response = await fetch(`${server.url}/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /not valid UTF-8/);
  });

  test('a form sent compressed is refused with 415 and Accept-Encoding: identity, and changes nothing', async () => {
    await client.get('/app/settings/keys');
    const keyForm = new URLSearchParams({ _csrf: client.csrf, name: 'sent compressed' }).toString();
    const keys = await fetch(`${server.url}/app/settings/keys`, {
      method: 'POST',
      headers: { cookie: client.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
      body: zlib.gzipSync(keyForm),
      redirect: 'manual',
    });
    assert.equal(keys.status, 415, await keys.text());
    assert.equal(keys.headers.get('accept-encoding'), 'identity');
    assert.equal((await server.db.selectFrom('api_keys').select('id').execute()).length, 0);

    await client.get('/app/remove');
    const tasksBefore = (await server.db.selectFrom('tasks').select('id').execute()).length;
    const uploadForm = new FormData();
    uploadForm.append('_csrf', client.csrf);
    uploadForm.append('file', new Blob([new Uint8Array(100)], { type: 'image/png' }), 'x.png');
    const multipart = new Response(uploadForm);
    const upload = await fetch(`${server.url}/app/removals`, {
      method: 'POST',
      headers: { cookie: client.cookieHeader(), 'content-type': multipart.headers.get('content-type') ?? '', 'content-encoding': 'gzip' },
      body: zlib.gzipSync(Buffer.from(await multipart.arrayBuffer())),
      redirect: 'manual',
    });
    assert.equal(upload.status, 415, await upload.text());
    assert.equal(upload.headers.get('accept-encoding'), 'identity');
    assert.equal((await server.db.selectFrom('tasks').select('id').execute()).length, tasksBefore);
  });
});
