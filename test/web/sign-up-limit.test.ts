// Farming sign-ups: each account starts with free credits and a taken email says so, so one client
// address gets a few sign-ups an hour, however many arrive at once, on both databases.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { findAccountByEmail } from '../../src/store/accounts-repository.ts';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUpFrom } from './from-address.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

const limit = 3;
const minuteMs = 60_000;

describeEachEngine('sign-up limit per address', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_WEB_SIGN_UPS_PER_HOUR: String(limit) }, { engine });
  });
  after(async () => server.close());
  // Every test signs up from 127.0.0.1: each starts with that address's hour unused.
  beforeEach(async () => {
    await server.db.deleteFrom('sign_up_attempts').execute();
  });

  /** Sign-ups from the test's own address, 127.0.0.1, one after the other; their statuses. */
  async function signUps(emails: string[]): Promise<number[]> {
    const statuses: number[] = [];
    for (const email of emails) statuses.push((await new WebClient(server.url).signUp(email, goodPassword)).status);
    return statuses;
  }

  test('the fourth sign-up from one address within the hour gets 429 with Retry-After, and no account', async () => {
    assert.deepEqual(await signUps([uniqueEmail(), uniqueEmail(), uniqueEmail()]), [303, 303, 303]);
    const email = uniqueEmail();
    const client = new WebClient(server.url);
    await client.get('/sign-up');
    const refused = await client.post('/sign-up', { email, password: goodPassword });
    assert.equal(refused.response.status, 429);
    const retryAfter = Number(refused.response.headers.get('retry-after'));
    // The first of the three leaves the hour in an hour, less the time this test took.
    assert.ok(retryAfter > 3500 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
    assert.match(refused.body, /Too many sign-ups from your network this hour\. Try again in 60 minutes\./);
    assert.match(refused.body, /<form method="post" action="\/sign-up"/, 'the sign-up page, to try again later');
    assert.equal(await findAccountByEmail(server.db, email), undefined);
    assert.equal(client.cookies.has('cutout_session'), false);
  });

  test('sign-ups refused because the email is taken count too, so emails cannot be tested without end', async () => {
    const taken = uniqueEmail();
    assert.deepEqual(await signUps([taken, taken, taken, uniqueEmail()]), [303, 409, 409, 429]);
    const probe = new WebClient(server.url);
    await probe.get('/sign-up');
    const answer = await probe.post('/sign-up', { email: taken, password: goodPassword });
    assert.equal(answer.response.status, 429);
    assert.doesNotMatch(answer.body, /already exists/, 'past the limit a taken email is not told apart');
  });

  test('a form refused for its password is not counted', async () => {
    const client = new WebClient(server.url);
    await client.get('/sign-up');
    for (let i = 0; i < limit + 2; i++) assert.equal((await client.post('/sign-up', { email: uniqueEmail(), password: 'short' })).response.status, 400);
    assert.deepEqual(await signUps([uniqueEmail()]), [303]);
  });

  test('another address is unaffected by one that reached the limit', async () => {
    assert.deepEqual(await signUps([uniqueEmail(), uniqueEmail(), uniqueEmail(), uniqueEmail()]), [303, 303, 303, 429]);
    const email = uniqueEmail();
    const other = await signUpFrom(server.url, '127.0.0.2', email);
    assert.equal(other.status, 303, other.body);
    assert.ok(await findAccountByEmail(server.db, email));
  });

  test('sign-ups older than an hour no longer count; the wait is until the oldest counted one leaves the hour', async () => {
    const now = Date.now();
    const backdated = (minutesAgo: number[]) =>
      server.db
        .insertInto('sign_up_attempts')
        .values(minutesAgo.map((m, i) => ({ id: `sua_old${i}_${now}_${m}`, ip: '127.0.0.1', created_at: now - m * minuteMs })))
        .execute();
    await backdated([61, 90, 120, 600]);
    assert.deepEqual(await signUps([uniqueEmail()]), [303]);
    await backdated([50, 30]);
    const client = new WebClient(server.url);
    await client.get('/sign-up');
    const refused = await client.post('/sign-up', { email: uniqueEmail(), password: goodPassword });
    assert.equal(refused.response.status, 429);
    const retryAfter = Number(refused.response.headers.get('retry-after'));
    // The sign-up of 50 minutes ago leaves the hour in 10 minutes (less the time this test took).
    assert.ok(retryAfter > 540 && retryAfter <= 600, `Retry-After ${retryAfter}`);
    assert.match(refused.body, /Try again in 10 minutes/);
  });

  test('twelve sign-ups sent at once from one address make three accounts; the rest get 429', async () => {
    const emails = Array.from({ length: 12 }, () => uniqueEmail());
    const clients = emails.map(() => new WebClient(server.url));
    await Promise.all(clients.map((c) => c.get('/sign-up')));
    const statuses = await Promise.all(clients.map(async (c, i) => (await c.post('/sign-up', { email: emails[i]!, password: goodPassword })).response.status));
    assert.equal(statuses.filter((s) => s === 303).length, limit, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 12 - limit, statuses.join(','));
    const made = await server.db.selectFrom('accounts').select('id').where('email', 'in', emails).execute();
    assert.equal(made.length, limit);
  });
});
