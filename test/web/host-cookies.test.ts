// Over https the session cookie and the form secret's cookie carry the __Host- prefix, which a
// browser takes only from a secure page with Secure, Path=/ and no Domain: another host of the
// domain, or someone answering for this one on plain http, cannot plant or overwrite them. The
// cookies under their plain names count for nothing there. Plain http keeps the plain names, since
// a __Host- cookie must be Secure. The visitors here reach the server through a trusted proxy on
// 127.0.0.1 that says https with X-Forwarded-Proto; nothing leaves loopback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

/** The Set-Cookie header this client last received for the cookie `name`. */
function setCookie(client: WebClient, name: string): string | undefined {
  return client.setCookies.filter((c) => c.startsWith(`${name}=`)).at(-1);
}

function assertHostCookie(header: string | undefined, name: string): void {
  assert.ok(header, `${name} is set`);
  for (const attribute of [/; Path=\/(;|$)/, /; HttpOnly/, /; Secure/, /; SameSite=Lax/]) assert.match(header, attribute, name);
  assert.doesNotMatch(header, /; Domain=/i, name);
}

describeEachEngine('cookies over https', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_TRUSTED_PROXIES: '127.0.0.1', CUTOUT_WEB_SIGN_UPS_PER_HOUR: '1000' }, { engine });
  });
  after(async () => server.close());

  const overHttps = () => new WebClient(server.url, { 'x-forwarded-proto': 'https' });

  /** A visitor signed up over https, and the page it is on (the keys page, with a form token). */
  async function signedUpOverHttps(): Promise<WebClient> {
    const client = overHttps();
    assert.equal((await client.signUp(uniqueEmail(), goodPassword)).status, 303);
    await client.get('/app/settings/keys');
    return client;
  }

  /** The keys form sent with this Cookie header and token: 403 when refused, 200 when a key is made. */
  async function createKey(cookie: string, token: string, name: string): Promise<number> {
    const response = await fetch(`${server.url}/app/settings/keys`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
      body: new URLSearchParams({ _csrf: token, name }).toString(),
      redirect: 'manual',
    });
    const made = await server.db.selectFrom('api_keys').select('id').where('name', '=', name).execute();
    assert.equal(made.length, response.status === 200 ? 1 : 0, `${name}: ${response.status}`);
    return response.status;
  }

  test('over https the session and form-secret cookies are __Host- cookies; over plain http they keep their plain names, without Secure', async () => {
    const secure = await signedUpOverHttps();
    assertHostCookie(setCookie(secure, '__Host-cutout_session'), 'session');
    assertHostCookie(setCookie(secure, '__Host-_csrf'), 'form secret');
    assert.deepEqual(secure.setCookies.filter((c) => !c.startsWith('__Host-')), [], 'no cookie under a plain name');

    const plain = new WebClient(server.url);
    assert.equal((await plain.signUp(uniqueEmail(), goodPassword)).status, 303);
    await plain.get('/app/settings/keys');
    assert.deepEqual([...plain.cookies.keys()].sort(), ['_csrf', 'cutout_session']);
    for (const header of plain.setCookies) assert.doesNotMatch(header, /; Secure/, header);
  });

  test('over https a session token under the plain cookie name, as another host of the domain could set it, signs no one in', async () => {
    const client = await signedUpOverHttps();
    const token = client.cookies.get('__Host-cutout_session') ?? client.cookies.get('cutout_session');
    const visit = (cookie: string) => fetch(`${server.url}/app/remove`, { headers: { cookie, 'x-forwarded-proto': 'https' }, redirect: 'manual' });
    const plain = await visit(`cutout_session=${token}`);
    assert.equal(plain.status, 303);
    assert.equal(plain.headers.get('location'), '/sign-in?next=%2Fapp%2Fremove');
    assert.equal((await visit(`__Host-cutout_session=${token}`)).status, 200);
  });

  test('signing out over https clears the __Host- session cookie and form secret, and an unknown session is cleared under the same name', async () => {
    const client = await signedUpOverHttps();
    assert.equal((await client.post('/sign-out', {})).response.status, 303);
    for (const name of ['__Host-cutout_session', '__Host-_csrf']) {
      const cleared = setCookie(client, name);
      assertHostCookie(cleared, name);
      assert.match(cleared ?? '', /; Max-Age=0/, name);
    }
    assert.deepEqual([...client.cookies.keys()], [], 'the browser is left with no cookie');

    const ended = await signedUpOverHttps();
    await server.db.deleteFrom('web_sessions').execute();
    assert.equal((await ended.get('/app/remove')).response.status, 303);
    assert.match(setCookie(ended, '__Host-cutout_session') ?? '', /; Max-Age=0/);
    assert.equal(ended.cookies.has('__Host-cutout_session'), false);
  });

  test('over https forms work with the __Host- form secret, and a form secret under the plain name, as another host could plant it, is refused', async () => {
    const email = uniqueEmail();
    await overHttps().signUp(email, goodPassword);
    const client = overHttps();
    await client.get('/sign-in');
    assert.equal((await client.post('/sign-in', { email, password: goodPassword })).response.status, 303);
    await client.get('/app/settings/keys');
    assert.equal((await client.post('/app/settings/keys', { name: 'made over https' })).response.status, 200);

    // Someone who planted a secret they know can make tokens for it.
    const planter = overHttps();
    await planter.get('/sign-in');
    const planted = planter.cookies.get('__Host-_csrf') ?? planter.cookies.get('_csrf');
    const session = [...client.cookies].filter(([name]) => name.endsWith('cutout_session')).map(([name, value]) => `${name}=${value}`);
    assert.equal(await createKey([...session, `_csrf=${planted}`].join('; '), planter.csrf, 'planted beside no secret'), 403);
    const own = client.cookies.get('__Host-_csrf') ?? '';
    assert.equal(await createKey([`_csrf=${planted}`, ...session, `__Host-_csrf=${own}`].join('; '), planter.csrf, 'planted beside the own secret'), 403);
  });
});
