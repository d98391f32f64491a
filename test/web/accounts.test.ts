// Accounts over HTTP: sign-up, cookies, CSRF on every form, session expiry, sign-in throttling.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { findAccount } from '../../src/store/accounts-repository.ts';
import { createWebAccount } from '../../src/store/web-accounts-repository.ts';
import { json, runCli } from '../support/cli.ts';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describeEachEngine('web accounts', (engine) => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({
      CUTOUT_WEB_FREE_CREDITS: '4',
      CUTOUT_WEB_SESSION_HOURS: '2',
      CUTOUT_WEB_SIGN_IN_MAX_FAILURES: '3',
      // These tests sign up a score of accounts from one address; sign-up-limit.test.ts tests the limit.
      CUTOUT_WEB_SIGN_UPS_PER_HOUR: '1000',
      CUTOUT_FETCH_MAX_BYTES: String(64 * 1024),
    }, { engine });
  });
  after(async () => server.close());

  async function accountIdOf(email: string): Promise<string> {
    return (await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
  }

  test('sign-up creates a free account with the configured web credits, an Argon2id hash and a session', async () => {
    const client = new WebClient(server.url);
    const email = uniqueEmail();
    const res = await client.signUp(email.toUpperCase(), goodPassword);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/app/remove');
    const account = await findAccount(server.db, await accountIdOf(email));
    assert.equal(account?.plan, 'free');
    assert.equal(account?.apiAccess, false);
    assert.equal(account?.creditsAvailable, 4);
    const credentials = await server.db.selectFrom('web_credentials').selectAll().where('account_id', '=', account?.id ?? '').executeTakeFirstOrThrow();
    assert.match(credentials.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.ok(!credentials.password_hash.includes(goodPassword));
    const page = await client.get('/app/credits');
    assert.equal(page.response.status, 200);
    assert.match(page.body, /4 credits/);
  });

  test('sign-ups racing with one email: one account is made and every other form gets 409, not a server error', async () => {
    const email = uniqueEmail();
    const clients = Array.from({ length: 6 }, () => new WebClient(server.url));
    await Promise.all(clients.map((client) => client.get('/sign-up')));
    const statuses = await Promise.all(clients.map(async (client) => (await client.post('/sign-up', { email, password: goodPassword })).response.status));
    assert.deepEqual([...statuses].sort(), [303, 409, 409, 409, 409, 409]);
  });

  test('the session cookie is httpOnly, SameSite=Lax, expires with the session, and is not Secure over plain http, which asks for no https', async () => {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    const cookie = client.setCookies.find((c) => c.startsWith('cutout_session='));
    assert.ok(cookie);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Path=\//);
    assert.match(cookie, /; Max-Age=7200/);
    const expires = Date.parse(/Expires=([^;]+)/.exec(cookie)?.[1] ?? '');
    assert.ok(Math.abs(expires - (Date.now() + 2 * 3_600_000)) < 60_000, 'expires when the session does');
    assert.doesNotMatch(cookie, /Secure/);
    assert.equal((await client.get('/app/remove')).response.headers.get('strict-transport-security'), null, 'plain http asks for no https');
    const csrfCookie = client.setCookies.find((c) => c.startsWith('_csrf='));
    assert.match(csrfCookie ?? '', /HttpOnly; SameSite=Lax/);
  });

  test('cookies are Secure __Host- cookies, and browsers are asked for https from then on, when the public URL is https, however its scheme is written', async () => {
    // A URL's scheme has no letter case, and the configuration takes either.
    for (const publicUrl of ['https://cutout.example.test', 'HTTPS://cutout.example.test']) {
      const secure = await startTestServer({ CUTOUT_PUBLIC_URL: publicUrl }, { engine });
      try {
        // The public URL names a proxy in front; the test talks to the bound loopback port itself.
        const address = secure.app.server.address();
        const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
        const client = new WebClient(url);
        const signedUp = await client.signUp(uniqueEmail(), goodPassword);
        assert.equal(signedUp.headers.get('strict-transport-security'), 'max-age=31536000', publicUrl);
        assert.match(client.setCookies.find((c) => c.startsWith('__Host-cutout_session=')) ?? '', /; Secure/, publicUrl);
        assert.match(client.setCookies.find((c) => c.startsWith('__Host-_csrf=')) ?? '', /; Secure/, publicUrl);
        assert.deepEqual(client.setCookies.filter((c) => !c.startsWith('__Host-')), [], 'no cookie under a plain name');
        // The public URL is https, so every request counts as one: the plain name is no session.
        const token = client.cookies.get('__Host-cutout_session') ?? client.cookies.get('cutout_session');
        const plain = await fetch(`${url}/app/remove`, { headers: { cookie: `cutout_session=${token}` }, redirect: 'manual' });
        assert.equal(plain.status, 303, publicUrl);
      } finally {
        await secure.close();
      }
    }
  });

  test('sign-up explains a taken email, a short password and a bad email', async () => {
    const email = uniqueEmail();
    await new WebClient(server.url).signUp(email, goodPassword);
    const cases: [string, string, number, RegExp][] = [
      [email, goodPassword, 409, /already exists/],
      [uniqueEmail(), 'short', 400, /at least 10 characters/],
      ['not-an-email', goodPassword, 400, /valid email/],
    ];
    for (const [address, password, status, message] of cases) {
      const client = new WebClient(server.url);
      await client.get('/sign-up');
      const { response, body } = await client.post('/sign-up', { email: address, password });
      assert.equal(response.status, status, address);
      assert.match(body, message);
      assert.equal(client.cookies.has('cutout_session'), false);
    }
  });

  test('every state-changing form is refused without a valid CSRF token', async () => {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/settings/keys');
    const forms: [string, Record<string, string>][] = [
      ['/sign-up', { email: uniqueEmail(), password: goodPassword }],
      ['/sign-in', { email: uniqueEmail(), password: goodPassword }],
      ['/sign-out', {}],
      ['/app/settings/keys', { name: 'sneaky' }],
      ['/app/settings/keys/key_x/delete', {}],
    ];
    for (const [pathname, fields] of forms) {
      for (const token of [null, 'forged-token']) {
        const { response, body } = await client.post(pathname, { ...fields, _csrf: token });
        assert.equal(response.status, 403, `${pathname} with ${token ?? 'no token'}`);
        assert.match(body, /not sent from a current page/);
      }
    }
    const upload = await client.post('/app/removals', { _csrf: 'forged', image_url: 'https://example.test/a.png' }, { name: 'a.png', data: Buffer.from('x'), type: 'image/png' });
    assert.equal(upload.response.status, 403);
    // A token from another browser's cookie secret does not pass either.
    const other = new WebClient(server.url);
    await other.get('/sign-up');
    const { response } = await client.post('/app/settings/keys', { name: 'sneaky', _csrf: other.csrf });
    assert.equal(response.status, 403);
    assert.equal((await server.db.selectFrom('api_keys').select('id').where('name', '=', 'sneaky').execute()).length, 0);
    assert.equal((await client.get('/app/credits')).response.status, 200, 'the session survived');
  });

  test('an expired session sends the visitor to sign in and is cleared', async () => {
    const client = new WebClient(server.url);
    const email = uniqueEmail();
    await client.signUp(email, goodPassword);
    assert.equal((await client.get('/app/history')).response.status, 200);
    await server.db.updateTable('web_sessions').set({ expires_at: Date.now() - 1000 }).where('account_id', '=', await accountIdOf(email)).execute();
    const { response } = await client.get('/app/history');
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/sign-in?next=%2Fapp%2Fhistory');
    assert.equal(client.cookies.has('cutout_session'), false, 'the stale cookie is cleared');
    const status = await client.get('/app/tasks/bgr_x/status');
    assert.equal(status.response.status, 401);
  });

  test('sign-out ends the session on the server, not only in the browser', async () => {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    const stolen = client.cookies.get('cutout_session');
    await client.get('/app/remove');
    const out = await client.post('/sign-out', {});
    assert.equal(out.response.status, 303);
    const replay = await fetch(`${server.url}/app/remove`, { headers: { cookie: `cutout_session=${stolen}` }, redirect: 'manual' });
    assert.equal(replay.status, 303);
  });

  test('sign-in works with the right password, refuses a wrong one, and says nothing about which part was wrong', async () => {
    const email = uniqueEmail();
    await new WebClient(server.url).signUp(email, goodPassword);
    const client = new WebClient(server.url);
    await client.get('/sign-in');
    const wrong = await client.post('/sign-in', { email, password: 'wrong password!' });
    assert.equal(wrong.response.status, 401);
    assert.match(wrong.body, /email or password is not right/);
    const unknown = await client.post('/sign-in', { email: uniqueEmail(), password: goodPassword });
    assert.equal(unknown.response.status, 401);
    assert.match(unknown.body, /email or password is not right/);
    const right = await client.post('/sign-in', { email, password: goodPassword, next: '/app/history' });
    assert.equal(right.response.status, 303);
    assert.equal(right.response.headers.get('location'), '/app/history');
    const signedIn = await client.get(`/sign-in?next=${encodeURIComponent('/app/../api/v1/bg/removals')}`);
    assert.equal(signedIn.response.headers.get('location'), '/app/remove', 'nor by a visitor already signed in');
    // Dot segments would take a browser out of /app/ once it resolves the Location header.
    for (const next of ['https://evil.example/', '//evil.example/app/', '/api/v1/bg/removals', '/app/../api/v1/bg/removals', '/app/%2e%2e/docs', '/app/./..//evil.example']) {
      const browser = new WebClient(server.url);
      await browser.get('/sign-in');
      const offsite = await browser.post('/sign-in', { email, password: goodPassword, next });
      assert.equal(offsite.response.headers.get('location'), '/app/remove', `${next} is not followed after sign-in`);
    }
  });

  test('after too many failures an email is locked for the window, even with the right password, until the failures age out', async () => {
    const email = uniqueEmail();
    await new WebClient(server.url).signUp(email, goodPassword);
    const client = new WebClient(server.url);
    await client.get('/sign-in');
    for (let i = 0; i < 3; i++) assert.equal((await client.post('/sign-in', { email, password: `guess number ${i}` })).response.status, 401);
    const locked = await client.post('/sign-in', { email, password: goodPassword });
    assert.equal(locked.response.status, 429);
    // The first of the three failures, made just now, leaves the 15-minute window in about 900 s.
    const retryAfter = Number(locked.response.headers.get('retry-after'));
    assert.ok(retryAfter > 840 && retryAfter <= 900, `Retry-After ${retryAfter}`);
    assert.match(locked.body, /Too many failed sign-in attempts/);
    assert.equal(client.cookies.has('cutout_session'), false);

    await server.db.updateTable('sign_in_attempts').set({ created_at: Date.now() - 16 * 60_000 }).where('email', '=', email).execute();
    const later = await client.post('/sign-in', { email, password: goodPassword });
    assert.equal(later.response.status, 303);
    assert.equal(client.cookies.has('cutout_session'), true);
  });

  test('one address guessing across many emails is locked too', async () => {
    const client = new WebClient(server.url);
    await client.get('/sign-in');
    // The per-address limit is ten times the per-email one (3 here).
    await server.db
      .insertInto('sign_in_attempts')
      .values(Array.from({ length: 30 }, (_, i) => ({ id: `att_bulk${i}`, email: `victim${i}@example.test`, ip: '127.0.0.1', succeeded: 0, created_at: Date.now() })))
      .execute();
    const email = uniqueEmail();
    await new WebClient(server.url).signUp(email, goodPassword);
    assert.equal((await client.post('/sign-in', { email, password: goodPassword })).response.status, 429);
    await server.db.deleteFrom('sign_in_attempts').where('id', 'like', 'att_bulk%').execute();
    assert.equal((await client.post('/sign-in', { email, password: goodPassword })).response.status, 303);
  });

  test('a sign-up whose password cannot be stored leaves no account behind', async () => {
    const email = uniqueEmail();
    // NOT NULL on the password hash makes the credential write fail after the account row was written.
    await assert.rejects(createWebAccount(server.db, { email, passwordHash: null as unknown as string, credits: 4 }));
    assert.equal(await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirst(), undefined);
    assert.equal((await new WebClient(server.url).signUp(email, goodPassword)).status, 303, 'the email is still free to sign up with');
  });

  test('the admin CLI manages an account made in the browser, and the pages show what it did', async () => {
    const client = new WebClient(server.url);
    const email = uniqueEmail();
    await client.signUp(email, goodPassword);
    const id = await accountIdOf(email);
    const env = { CUTOUT_DATA_DIR: server.dataDir, ...(server.config.databaseUrl ? { DATABASE_URL: server.config.databaseUrl } : {}) };
    const shown = json(await runCli(['accounts', 'show', id, '--json'], env));
    assert.deepEqual([shown.email, shown.plan, shown.api_access, shown.credits], [email, 'free', false, 4]);
    json(await runCli(['credits', 'grant', '--account', id, '--amount', '20', '--purchase', '--json'], env));
    const keys = await client.get('/app/settings/keys');
    assert.match(keys.body, /API access: enabled/);
    assert.match((await client.get('/app/credits')).body, /24 credits[\s\S]*Purchase/);
    const created = await client.post('/app/settings/keys', { name: 'from the web' });
    const listed = json(await runCli(['keys', 'list', '--account', id, '--json'], env));
    assert.match(JSON.stringify(listed), /from the web/);
    assert.ok(!JSON.stringify(listed).includes(/value="(cut_[^"]+)"/.exec(created.body)?.[1] ?? 'missing'), 'the CLI lists no full key');
  });

  test('signing in again replaces the old session', async () => {
    const email = uniqueEmail();
    const client = new WebClient(server.url);
    await client.signUp(email, goodPassword);
    const first = client.cookies.get('cutout_session');
    // Signed in, /sign-in sends the visitor on; a page of the session gives the form its token.
    await client.get('/app/remove');
    assert.equal((await client.post('/sign-in', { email, password: goodPassword })).response.status, 303);
    assert.notEqual(client.cookies.get('cutout_session'), first);
    const old = await fetch(`${server.url}/app/remove`, { headers: { cookie: `cutout_session=${first}` }, redirect: 'manual' });
    assert.equal(old.status, 303);
  });

  test('an upload over the size limit is refused with the limit named, and makes no task', async () => {
    const client = new WebClient(server.url);
    const email = uniqueEmail();
    await client.signUp(email, goodPassword);
    const page = await client.get('/app/remove');
    assert.match(page.body, /up to 64 KB/);
    const { response, body } = await client.post('/app/removals', { image_url: '' }, { name: 'big.png', data: Buffer.alloc(65 * 1024, 1), type: 'image/png' });
    assert.equal(response.status, 413);
    assert.match(body, /Images may be at most 64 KB/);
    assert.equal((await server.db.selectFrom('tasks').select('id').where('account_id', '=', await accountIdOf(email)).execute()).length, 0);
  });

  test('pages of the app need a session', async () => {
    for (const pathname of ['/app/remove', '/app/history', '/app/credits', '/app/settings/keys']) {
      const { response } = await new WebClient(server.url).get(pathname);
      assert.equal(response.status, 303, pathname);
      assert.equal(response.headers.get('location'), `/sign-in?next=${encodeURIComponent(pathname)}`);
    }
  });
});
