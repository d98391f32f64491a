// Only the upload form takes files, and only from a signed-in visitor: an anonymous upload is sent
// to sign in before its body is read, and every other form refuses a multipart body unread.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

const maxBytes = 64 * 1024;

function formWithFile(size: number, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([new Uint8Array(size)], { type: 'image/png' }), 'x.png');
  return form;
}

describeEachEngine('multipart bodies', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_FETCH_MAX_BYTES: String(maxBytes) }, { engine });
  });
  after(async () => server.close());

  test('an anonymous upload larger than the limit is sent to sign in, not parsed (which would answer 413)', async () => {
    const response = await fetch(`${server.url}/app/removals`, { method: 'POST', body: formWithFile(maxBytes * 4), redirect: 'manual' });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/sign-in');
  });

  test('sign-in and the key form refuse a multipart body with 415 and change nothing', async () => {
    const anonymous = await fetch(`${server.url}/sign-in`, { method: 'POST', body: formWithFile(maxBytes * 4, { email: 'a@example.test' }), redirect: 'manual' });
    assert.equal(anonymous.status, 415);
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/settings/keys');
    const cookie = client.cookieHeader();
    const keys = await fetch(`${server.url}/app/settings/keys`, {
      method: 'POST',
      headers: { cookie },
      body: formWithFile(1024, { _csrf: client.csrf, name: 'from a file form' }),
      redirect: 'manual',
    });
    assert.equal(keys.status, 415);
    assert.equal((await server.db.selectFrom('api_keys').select('id').execute()).length, 0);
  });

  test('a signed-in upload without the form token is still refused with 403 and makes no task', async () => {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/remove');
    const { response } = await client.post('/app/removals', { _csrf: null }, { name: 'a.png', data: Buffer.alloc(100), type: 'image/png' });
    assert.equal(response.status, 403);
    assert.equal((await server.db.selectFrom('tasks').select('id').execute()).length, 0);
  });

  /** A signed-in visitor on the remove page, and the form as a browser sends it with no file chosen. */
  async function removeForm(fields: Record<string, string>): Promise<{ client: WebClient; form: FormData }> {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/remove');
    const form = new FormData();
    form.append('_csrf', client.csrf);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('file', new Blob([], { type: 'application/octet-stream' }), '');
    return { client, form };
  }

  test('a pasted URL of 1500 non-ASCII letters (4.5 KB in the form) makes a task for that URL, not a shorter one', async () => {
    const imageUrl = `https://example.com/${'写'.repeat(1500)}.jpg`;
    const { client, form } = await removeForm({ image_url: imageUrl });
    const response = await fetch(`${server.url}/app/removals`, { method: 'POST', headers: { cookie: client.cookieHeader() }, body: form, redirect: 'manual' });
    assert.equal(response.status, 303);
    const taskId = (response.headers.get('location') ?? '').split('/').pop() ?? '';
    const task = await server.db.selectFrom('tasks').select('image_url').where('id', '=', taskId).executeTakeFirstOrThrow();
    assert.equal([...task.image_url].length, [...imageUrl].length, 'the whole URL is kept');
    assert.equal(task.image_url, imageUrl);
  });

  test('a form field longer than any the form takes is refused with 413, not cut short, and makes no task', async () => {
    const { client, form } = await removeForm({ image_url: `https://example.com/${' '.repeat(20_000)}` });
    const before = (await server.db.selectFrom('tasks').select('id').execute()).length;
    const response = await fetch(`${server.url}/app/removals`, { method: 'POST', headers: { cookie: client.cookieHeader() }, body: form, redirect: 'manual' });
    assert.equal(response.status, 413);
    assert.match(await response.text(), /A form field is longer than 16 KB/);
    assert.equal((await server.db.selectFrom('tasks').select('id').execute()).length, before);
  });

  test('a multipart body that does not parse (no boundary, or no closing boundary) is refused with 400 as the request\'s fault', async () => {
    const { client, form } = await removeForm({ image_url: 'https://example.com/a.jpg' });
    const whole = new Response(form);
    const type = whole.headers.get('content-type') ?? '';
    const bytes = Buffer.from(await whole.arrayBuffer());
    const sent = [
      { label: 'no boundary', type: 'multipart/form-data', body: bytes },
      { label: 'no closing boundary', type, body: bytes.subarray(0, bytes.length - 40) },
    ];
    for (const { label, type: contentType, body } of sent) {
      const response = await fetch(`${server.url}/app/removals`, { method: 'POST', headers: { cookie: client.cookieHeader(), 'content-type': contentType }, body, redirect: 'manual' });
      assert.equal(response.status, 400, label);
      assert.match(await response.text(), /The form could not be read/, label);
    }
  });
});
