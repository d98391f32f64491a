// Guessing a password: at most the configured number of guesses per email and window are ever
// checked, however many arrive at once, on both databases; a locked email is told when it reopens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describeEachEngine('sign-in guessing limit', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_WEB_SIGN_IN_MAX_FAILURES: '3' }, { engine });
  });
  after(async () => server.close());

  test('fifteen wrong passwords sent at once: three are checked (401), the rest are refused unchecked (429)', async () => {
    const email = uniqueEmail();
    await new WebClient(server.url).signUp(email, goodPassword);
    const clients = Array.from({ length: 15 }, () => new WebClient(server.url));
    await Promise.all(clients.map((c) => c.get('/sign-in')));
    const statuses = await Promise.all(clients.map(async (c, i) => (await c.post('/sign-in', { email, password: `wrong guess ${i}` })).response.status));
    assert.equal(statuses.filter((s) => s === 401).length, 3, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 12, statuses.join(','));
    const failures = await server.db.selectFrom('sign_in_attempts').select('id').where('email', '=', email).where('succeeded', '=', 0).execute();
    assert.equal(failures.length, 3, 'refused attempts are not counted, so they do not extend the lock');
  });

  test('a locked email is told to come back when its oldest counted failure leaves the 15-minute window', async () => {
    const email = uniqueEmail();
    await new WebClient(server.url).signUp(email, goodPassword);
    const now = Date.now();
    await server.db
      .insertInto('sign_in_attempts')
      .values([10, 5, 1].map((minutesAgo, i) => ({ id: `att_old${i}${now}`, email, ip: '192.0.2.1', succeeded: 0, created_at: now - minutesAgo * 60_000 })))
      .execute();
    const client = new WebClient(server.url);
    await client.get('/sign-in');
    const locked = await client.post('/sign-in', { email, password: goodPassword });
    assert.equal(locked.response.status, 429);
    const retryAfter = Number(locked.response.headers.get('retry-after'));
    // The failure of 10 minutes ago ages out in 5 minutes (less the time this test took).
    assert.ok(retryAfter > 240 && retryAfter <= 300, `Retry-After ${retryAfter}`);
    assert.match(locked.body, /try again in 5 minutes/);
    assert.equal(client.cookies.has('cutout_session'), false);
  });

  test('the right password within the limit signs in and clears the failures of that email', async () => {
    const email = uniqueEmail();
    await new WebClient(server.url).signUp(email, goodPassword);
    const client = new WebClient(server.url);
    await client.get('/sign-in');
    for (let i = 0; i < 2; i++) assert.equal((await client.post('/sign-in', { email, password: `wrong guess ${i}` })).response.status, 401);
    assert.equal((await client.post('/sign-in', { email, password: goodPassword })).response.status, 303);
    const failures = await server.db.selectFrom('sign_in_attempts').select('id').where('email', '=', email).where('succeeded', '=', 0).execute();
    assert.equal(failures.length, 0);
  });
});

describeEachEngine('sign-in guessing limit per address', (engine) => {
  let server: TestServer;
  before(async () => {
    // One failure per email and window, so ten per address.
    server = await startTestServer({ CUTOUT_WEB_SIGN_IN_MAX_FAILURES: '1' }, { engine });
  });
  after(async () => server.close());

  test('forty guesses at forty emails sent at once from one address: at most ten are checked', async () => {
    const clients = Array.from({ length: 40 }, () => new WebClient(server.url));
    await Promise.all(clients.map((c) => c.get('/sign-in')));
    const statuses = await Promise.all(clients.map(async (c, i) => (await c.post('/sign-in', { email: uniqueEmail(), password: `wrong guess ${i}` })).response.status));
    assert.equal(statuses.filter((s) => s === 401).length, 10, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 30, statuses.join(','));
  });
});
