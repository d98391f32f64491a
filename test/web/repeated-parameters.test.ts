// A link with a parameter given twice (a bookmarklet, a proxy that appends, a double click on a
// built URL) is read as if given once, with its first value, on both databases: never a server error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describeEachEngine('web app parameters given twice', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({}, { engine });
  });
  after(async () => server.close());

  test('the sign-in page keeps the first next and shows the signed-out notice once', async () => {
    const anonymous = new WebClient(server.url);
    const twoNexts = await anonymous.get('/sign-in?next=/app/history&next=/app/credits');
    assert.equal(twoNexts.response.status, 200);
    assert.match(twoNexts.body, /name="next" value="\/app\/history"/);
    const twoNotices = await anonymous.get('/sign-in?signed_out=1&signed_out=1');
    assert.equal(twoNotices.response.status, 200);
    assert.match(twoNotices.body, /You are signed out\./);
  });

  test('a signed-in visitor with two nexts is sent to the first; the keys page shows its notice once', async () => {
    const client = new WebClient(server.url);
    await client.signUp(uniqueEmail(), goodPassword);
    const redirect = await client.get('/sign-in?next=/app/history&next=/app/credits');
    assert.equal(redirect.response.status, 303);
    assert.equal(redirect.response.headers.get('location'), '/app/history');
    const keys = await client.get('/app/settings/keys?deleted=1&deleted=1');
    assert.equal(keys.response.status, 200);
    assert.match(keys.body, /The key was deleted\./);
  });
});
