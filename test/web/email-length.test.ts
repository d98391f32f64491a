// An email address longer than any mail system delivers to is refused with the form's message on
// sign-up and sign-in, and by the admin CLI, on both databases: never a server error, no account.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../support/cli.ts';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, WebClient } from './web-client.ts';

describeEachEngine('email addresses past 254 characters', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({}, { engine });
  });
  after(async () => server.close());

  const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(56)}.test`; // 254 characters
  const tooLong = `${'x'.repeat(9000)}@example.test`;

  test('sign-up with a 9,000-character email says so and makes no account; 254 characters are accepted', async () => {
    assert.equal(longest.length, 254);
    const client = new WebClient(server.url);
    await client.get('/sign-up');
    const refused = await client.post('/sign-up', { email: tooLong, password: goodPassword });
    assert.equal(refused.response.status, 400);
    assert.match(refused.body, /An email address has at most 254 characters\./);
    assert.equal((await server.db.selectFrom('accounts').select('id').execute()).length, 0);
    assert.equal((await new WebClient(server.url).signUp(longest, goodPassword)).status, 303);
  });

  test('sign-in with a 9,000-character email is refused as a form error and records no attempt', async () => {
    const client = new WebClient(server.url);
    await client.get('/sign-in');
    const refused = await client.post('/sign-in', { email: tooLong, password: goodPassword });
    assert.equal(refused.response.status, 400);
    assert.match(refused.body, /Enter your email and password\./);
    assert.equal((await server.db.selectFrom('sign_in_attempts').select('id').execute()).length, 0);
  });

  test('the admin CLI refuses a 9,000-character email with the same message and makes no account', async () => {
    const env = { CUTOUT_DATA_DIR: server.dataDir, ...(server.config.databaseUrl ? { DATABASE_URL: server.config.databaseUrl } : {}) };
    const run = await runCli(['accounts', 'create', '--email', tooLong, '--json'], env);
    assert.notEqual(run.code, 0);
    // With --json the failure is the JSON error object on stdout.
    const failure = (JSON.parse(run.stdout) as { error: { code: string; message: string } }).error;
    assert.equal(failure.code, 'invalid_usage');
    assert.match(failure.message, /at most 254 characters/);
    assert.equal(await server.db.selectFrom('accounts').select('id').where('email', '=', tooLong).executeTakeFirst(), undefined);
  });
});
