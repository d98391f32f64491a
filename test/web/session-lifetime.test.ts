// Sessions end when another account is made in the same browser, pages are never kept by a cache,
// and a session lifetime no cookie can express is refused at start.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describeEachEngine('web sessions', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({}, { engine });
  });
  after(async () => server.close());

  test('signing up while signed in ends the old session, as signing in does', async () => {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    const old = client.cookies.get('cutout_session');
    await client.get('/app/remove');
    const second = await client.post('/sign-up', { email: uniqueEmail(), password: goodPassword });
    assert.equal(second.response.status, 303);
    assert.notEqual(client.cookies.get('cutout_session'), old);
    const withOld = await fetch(`${server.url}/app/credits`, { headers: { cookie: `cutout_session=${old}` }, redirect: 'manual' });
    assert.equal(withOld.status, 303);
    assert.equal(withOld.headers.get('location'), '/sign-in?next=%2Fapp%2Fcredits');
    assert.equal((await server.db.selectFrom('web_sessions').select('id').execute()).length, 1);
  });

  test('signed-in pages (remove, history, task, credits, keys) are sent with Cache-Control: no-store', async () => {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/remove');
    const created = await client.post('/app/removals', { image_url: 'https://example.com/a.jpg' });
    const taskPage = created.response.headers.get('location') ?? '';
    assert.match(taskPage, /^\/app\/tasks\/bgr_/);
    for (const pathname of ['/app/remove', '/app/history', taskPage, '/app/credits', '/app/settings/keys']) {
      const { response } = await client.get(pathname);
      assert.equal(response.status, 200, pathname);
      assert.equal(response.headers.get('cache-control'), 'no-store', pathname);
    }
  });

  test('a session lifetime that is no whole number of milliseconds (0.333333 h, 20 minutes) signs up and in', async () => {
    const twentyMinutes = await startTestServer({ CUTOUT_WEB_SESSION_HOURS: '0.333333' }, { engine });
    try {
      const email = uniqueEmail();
      assert.equal((await new WebClient(twentyMinutes.url).signUp(email, goodPassword)).status, 303);
      const client = new WebClient(twentyMinutes.url);
      await client.get('/sign-in');
      assert.equal((await client.post('/sign-in', { email, password: goodPassword })).response.status, 303);
      assert.equal((await client.get('/app/credits')).response.status, 200);
    } finally {
      await twentyMinutes.close();
    }
  });

  test('the sign-in and sign-up pages, which carry a form token and set its secret, are sent with Cache-Control: no-store too', async () => {
    for (const pathname of ['/sign-in', '/sign-up', '/sign-in?next=%2Fapp%2Fhistory']) {
      const { response, body } = await new WebClient(server.url).get(pathname);
      assert.equal(response.status, 200, pathname);
      assert.match(body, /name="_csrf"/);
      assert.match(response.headers.get('set-cookie') ?? '', /^_csrf=/);
      assert.equal(response.headers.get('cache-control'), 'no-store', pathname);
    }
    const refused = await new WebClient(server.url).post('/sign-in', { email: uniqueEmail(), password: 'wrong password!', _csrf: null });
    assert.equal(refused.response.status, 403);
    assert.equal(refused.response.headers.get('cache-control'), 'no-store', 'the refused form');
  });
});

test('a session lifetime past ten years is refused at start with a clear message; ten years sign up fine', async () => {
  assert.throws(
    () => loadConfig({ CUTOUT_WEB_SESSION_HOURS: '10000000000' }),
    (err) => err instanceof ConfigError && /CUTOUT_WEB_SESSION_HOURS: at most 87600 hours \(10 years\)/.test(err.message),
  );
  const server = await startTestServer({ CUTOUT_WEB_SESSION_HOURS: '87600' });
  try {
    assert.equal((await new WebClient(server.url).signUp(uniqueEmail(), goodPassword)).status, 303);
  } finally {
    await server.close();
  }
});
