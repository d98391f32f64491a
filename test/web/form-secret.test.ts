// Form tokens belong to one session: a token handed out before a sign-in, a sign-up or a sign-out
// (read by someone at a shared browser, or planted before the visitor signed in) is refused after
// it, while the pages that follow hand out tokens that work.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describeEachEngine('form tokens across sessions', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_WEB_SIGN_UPS_PER_HOUR: '1000' }, { engine });
  });
  after(async () => server.close());

  /** Creates a key with the given token: 403 when the token is refused, 200 when a key is made. */
  async function createKey(client: WebClient, name: string, token: string): Promise<number> {
    const { response } = await client.post('/app/settings/keys', { name, _csrf: token });
    const made = await server.db.selectFrom('api_keys').select('id').where('name', '=', name).execute();
    assert.equal(made.length, response.status === 200 ? 1 : 0, `${name}: ${response.status}`);
    return response.status;
  }

  test('a token from the sign-in page is refused once the visitor has signed in', async () => {
    const email = uniqueEmail();
    await new WebClient(server.url).signUp(email, goodPassword);
    const client = new WebClient(server.url);
    await client.get('/sign-in');
    const before = client.csrf;
    assert.equal((await client.post('/sign-in', { email, password: goodPassword })).response.status, 303);
    assert.equal(await createKey(client, 'planted before sign-in', before), 403);
    await client.get('/app/settings/keys');
    assert.equal(await createKey(client, 'after sign-in', client.csrf), 200);
  });

  test('a token from the sign-up page is refused once the account is made', async () => {
    const client = new WebClient(server.url);
    await client.get('/sign-up');
    const before = client.csrf;
    assert.equal((await client.post('/sign-up', { email: uniqueEmail(), password: goodPassword })).response.status, 303);
    assert.equal(await createKey(client, 'planted before sign-up', before), 403);
  });

  test("after a sign-out, the next account signed in at that browser refuses the previous one's tokens", async () => {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    await client.get('/app/settings/keys');
    const previous = client.csrf;
    assert.equal((await client.post('/sign-out', {})).response.status, 303);
    const next = uniqueEmail();
    await new WebClient(server.url).signUp(next, goodPassword);
    await client.get('/sign-in?signed_out=1');
    assert.equal((await client.post('/sign-in', { email: next, password: goodPassword })).response.status, 303);
    assert.equal(await createKey(client, 'left by the previous account', previous), 403);
  });
});
