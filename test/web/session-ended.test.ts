// A form sent after the session ended (expired, or signed out in another tab) takes the visitor to
// the sign-in page, which brings them back to the page the form was on; the task page's status
// endpoint, read by web.js, answers JSON 401 instead, which the script turns into that same visit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({});
});
after(async () => server.close());

/** A signed-in client whose session then ends on the server, with a form page already open. */
async function clientWithEndedSession(formPage: string): Promise<WebClient> {
  const client = new WebClient(server.url);
  await client.signUp(uniqueEmail(), goodPassword);
  await client.get(formPage);
  await server.db.deleteFrom('web_sessions').execute();
  return client;
}

function postForm(client: WebClient, pathname: string, fields: Record<string, string>, referer?: string): Promise<Response> {
  const cookie = client.cookieHeader();
  return fetch(`${server.url}${pathname}`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...(referer ? { referer } : {}) },
    body: new URLSearchParams({ _csrf: client.csrf, ...fields }).toString(),
    redirect: 'manual',
  });
}

test('the remove form sent after the session ended leads to sign-in and back to the form', async () => {
  const client = await clientWithEndedSession('/app/remove');
  const response = await postForm(client, '/app/removals', { image_url: 'https://example.com/a.jpg' }, `${server.url}/app/remove`);
  assert.equal(response.status, 303);
  assert.equal(response.headers.get('location'), '/sign-in?next=%2Fapp%2Fremove');
  assert.equal((await server.db.selectFrom('tasks').select('id').execute()).length, 0);
});

test('a key form sent after the session ended leads to sign-in; without a same-site Referer to the default page', async () => {
  const client = await clientWithEndedSession('/app/settings/keys');
  const fromKeys = await postForm(client, '/app/settings/keys', { name: 'late' }, `${server.url}/app/settings/keys`);
  assert.equal(fromKeys.status, 303);
  assert.equal(fromKeys.headers.get('location'), '/sign-in?next=%2Fapp%2Fsettings%2Fkeys');
  const elsewhere = await postForm(client, '/app/settings/keys/key_x/delete', {}, 'https://elsewhere.example/app/history');
  assert.equal(elsewhere.status, 303);
  assert.equal(elsewhere.headers.get('location'), '/sign-in');
});

test("the task status endpoint answers JSON 401 signed_out, with or without a query string", async () => {
  const client = await clientWithEndedSession('/app/remove');
  for (const pathname of ['/app/tasks/bgr_aaaaaaaaaaaaaaaaaaaa/status', '/app/tasks/bgr_aaaaaaaaaaaaaaaaaaaa/status?t=1']) {
    const { response, body } = await client.get(pathname);
    assert.equal(response.status, 401, pathname);
    assert.equal(response.headers.get('content-type')?.split(';')[0], 'application/json');
    assert.equal((JSON.parse(body) as { error: { code: string } }).error.code, 'signed_out');
  }
});
