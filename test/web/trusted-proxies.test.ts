// Behind a reverse proxy listed in CUTOUT_TRUSTED_PROXIES the per-address sign-up and sign-in limits
// count each visitor by the address the proxy forwards; a client that is not a listed proxy, or any
// client when none is listed, cannot choose its address, scheme or host with X-Forwarded-* headers.
// Every connection stays on loopback: 127.0.0.1 plays the proxy, 127.0.0.2 a client that is not
// one, and the visitors' addresses are only header values.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { forgetAttempts, signUps, startProxiedServer } from './proxied-visitors.ts';
import { signUpFrom } from './from-address.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

/** The session cookie as set: __Host-cutout_session where it is Secure, cutout_session where not. */
const sessionCookie = (setCookies: string[]): string | undefined => setCookies.find((c) => /^(__Host-)?cutout_session=/.test(c));

describeEachEngine('behind a trusted proxy', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startProxiedServer(engine, '127.0.0.1, 198.51.100.0/24,2001:db8:ffff::/48');
  });
  after(async () => server.close());
  beforeEach(() => forgetAttempts(server));

  test('two visitors with different forwarded addresses each get their own sign-up allowance', async () => {
    // What a visitor writes in front of the address the proxy adds is passed over.
    assert.deepEqual(await signUps(server, ['203.0.113.7', '10.0.0.1, 203.0.113.7', '10.0.0.2, 203.0.113.7']), [303, 303, 429]);
    assert.deepEqual(await signUps(server, ['198.51.100.9', '198.51.100.9']), [303, 303]);
  });

  test('one visitor guessing passwords does not lock sign-in for another visitor behind the proxy', async () => {
    const email = uniqueEmail();
    const visitor = new WebClient(server.url, { 'x-forwarded-for': '198.51.100.20' });
    assert.equal((await visitor.signUp(email, goodPassword)).status, 303);
    const guesser = new WebClient(server.url, { 'x-forwarded-for': '203.0.113.66' });
    await guesser.get('/sign-in');
    for (let i = 0; i < 10; i++) assert.equal((await guesser.post('/sign-in', { email: uniqueEmail(), password: `guess ${i}` })).response.status, 401);
    assert.equal((await guesser.post('/sign-in', { email: uniqueEmail(), password: 'guess 10' })).response.status, 429);
    const sameVisitor = new WebClient(server.url, { 'x-forwarded-for': '198.51.100.20' });
    await sameVisitor.get('/sign-in');
    assert.equal((await sameVisitor.post('/sign-in', { email, password: goodPassword })).response.status, 303);
  });

  test('a visitor forwarded as address:port is counted by its address, whatever port it comes from', async () => {
    assert.deepEqual(await signUps(server, ['203.0.113.40:50001', '203.0.113.40:50002', '203.0.113.40']), [303, 303, 429]);
    assert.deepEqual(await signUps(server, ['[2001:db8:7:7::1]:443', '[2001:db8:7:7::2]:444', '2001:db8:7:7::3']), [303, 303, 429]);
  });

  test('an outer proxy that the next one forwards as address:port is still a listed proxy: visitors behind it keep their own allowances', async () => {
    assert.deepEqual(
      await signUps(server, ['203.0.113.50, 198.51.100.1:443', '203.0.113.50, 198.51.100.1:50123', '203.0.113.51, 198.51.100.1:50124', '203.0.113.50, 198.51.100.1']),
      [303, 303, 303, 429],
    );
    assert.deepEqual(await signUps(server, ['2001:db8:50::1, [2001:db8:ffff::5]:443', '2001:db8:51::1, [2001:db8:ffff::5]:443', '2001:db8:51::2, [2001:db8:ffff::5]:444']), [303, 303, 303]);
  });

  test('a client that is not a trusted proxy cannot pick its address with X-Forwarded-For', async () => {
    const from = (forwardedFor: string) => signUpFrom(server.url, '127.0.0.2', uniqueEmail(), { 'x-forwarded-for': forwardedFor });
    assert.deepEqual([(await from('203.0.113.1')).status, (await from('203.0.113.2')).status, (await from('203.0.113.3')).status], [303, 303, 429]);
    // It was counted under its own address, the one the proxy would forward for it.
    assert.deepEqual(await signUps(server, ['127.0.0.2']), [429]);
  });

  test("the proxy's X-Forwarded-Proto https makes the session cookie a Secure __Host- cookie and asks browsers for https from then on; another client's does neither", async () => {
    const proxied = new WebClient(server.url, { 'x-forwarded-for': '203.0.113.8', 'x-forwarded-proto': 'https' });
    const signedUp = await proxied.signUp(uniqueEmail(), goodPassword);
    assert.equal(signedUp.status, 303);
    assert.match(sessionCookie(proxied.setCookies) ?? 'no session cookie', /^__Host-cutout_session=.*; Secure/);
    assert.equal(signedUp.headers.get('strict-transport-security'), 'max-age=31536000');
    assert.equal((await proxied.get('/sign-in')).response.headers.get('strict-transport-security'), 'max-age=31536000');
    const direct = await signUpFrom(server.url, '127.0.0.2', uniqueEmail(), { 'x-forwarded-proto': 'https' });
    assert.equal(direct.status, 303);
    const cookie = sessionCookie(direct.headers['set-cookie'] ?? []);
    assert.match(cookie ?? 'no session cookie', /^cutout_session=/);
    assert.doesNotMatch(cookie ?? '', /; Secure/);
    assert.equal(direct.headers['strict-transport-security'], undefined);
  });

  test("a form sent after the session ended comes back to its page by the Host header; X-Forwarded-Host, which a load balancer may pass on from the visitor, counts for nothing", async () => {
    const client = new WebClient(server.url, { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' });
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/settings/keys');
    await server.db.deleteFrom('web_sessions').execute();
    const lateForm = (referer: string) =>
      fetch(`${server.url}/app/settings/keys`, {
        method: 'POST',
        headers: {
          cookie: client.cookieHeader(),
          'content-type': 'application/x-www-form-urlencoded',
          referer,
          'x-forwarded-for': '203.0.113.9',
          'x-forwarded-host': 'elsewhere.example',
        },
        body: new URLSearchParams({ _csrf: client.csrf, name: 'late' }).toString(),
        redirect: 'manual',
      });
    const own = await lateForm(`${server.url}/app/settings/keys`);
    assert.equal(own.status, 303);
    assert.equal(own.headers.get('location'), '/sign-in?next=%2Fapp%2Fsettings%2Fkeys');
    const forwarded = await lateForm('https://elsewhere.example/app/settings/keys');
    assert.equal(forwarded.headers.get('location'), '/sign-in', 'the Referer is of the forwarded host, not of this one');
  });

  test("an upload's image URL is the server's own, whatever host and scheme the proxy forwards", async () => {
    const client = new WebClient(server.url, { 'x-forwarded-for': '203.0.113.10', 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'https' });
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/remove');
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3c3' } }).png().toBuffer();
    const posted = await client.post('/app/removals', {}, { name: 'a.png', data: png, type: 'image/png' });
    assert.equal(posted.response.status, 303);
    const taskId = posted.response.headers.get('location')?.split('/').pop() ?? '';
    const task = await server.db.selectFrom('tasks').select('image_url').where('id', '=', taskId).executeTakeFirstOrThrow();
    assert.match(task.image_url, new RegExp(`^${server.url}/app/uploads/upl_`));
  });
});

describe('with no trusted proxies', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_WEB_SIGN_UPS_PER_HOUR: '2' });
  });
  after(async () => server.close());

  test('X-Forwarded-For, -Proto and -Host are ignored', async () => {
    const headers = (forwardedFor: string) => ({ 'x-forwarded-for': forwardedFor, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'cutout.example' });
    const clients = ['203.0.113.1', '203.0.113.2', '203.0.113.3'].map((value) => new WebClient(server.url, headers(value)));
    const statuses: number[] = [];
    for (const client of clients) statuses.push((await client.signUp(uniqueEmail(), goodPassword)).status);
    assert.deepEqual(statuses, [303, 303, 429], 'all three are the TCP peer, 127.0.0.1');
    const signedUp = clients[0]!;
    const cookie = sessionCookie(signedUp.setCookies);
    assert.match(cookie ?? 'no session cookie', /^cutout_session=/);
    assert.doesNotMatch(cookie ?? '', /; Secure/);
    const keysPage = await signedUp.get('/app/settings/keys');
    assert.equal(keysPage.response.headers.get('strict-transport-security'), null, 'plain http asks for no https');
    await server.db.deleteFrom('web_sessions').execute();
    const sent = await fetch(`${server.url}/app/settings/keys`, {
      method: 'POST',
      headers: { ...headers('203.0.113.1'), cookie: signedUp.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', referer: 'https://cutout.example/app/settings/keys' },
      body: new URLSearchParams({ _csrf: signedUp.csrf, name: 'late' }).toString(),
      redirect: 'manual',
    });
    assert.equal(sent.headers.get('location'), '/sign-in', 'the Referer is not of this host');
  });
});
