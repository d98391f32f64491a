// One address is one account, whatever its letter case and wherever the account was made (web
// sign-up, the admin CLI), on both databases; an operator can give a CLI-made account a password
// so its owner can use the web app.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { passwordCommand } from '../../src/cli/passwords.ts';
import { createAccount, EmailTakenError } from '../../src/store/accounts-repository.ts';
import { runCli } from '../support/cli.ts';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describeEachEngine('email letter case', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({}, { engine });
  });
  after(async () => server.close());

  const cliEnv = () => ({ CUTOUT_DATA_DIR: server.dataDir, ...(server.config.databaseUrl ? { DATABASE_URL: server.config.databaseUrl } : {}) });
  const accountsWith = async (email: string) =>
    (await server.db.selectFrom('accounts').select('email').execute()).filter((r) => r.email.toLowerCase() === email.toLowerCase()).map((r) => r.email);

  test('an account made with the CLI in mixed case is stored lower-case, and the web sign-up with that address says it exists', async () => {
    const mixed = `Mixed.${uniqueEmail()}`.replace('example', 'Example');
    const run = await runCli(['accounts', 'create', '--email', mixed, '--plan', 'paid', '--credits', '10'], cliEnv());
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(await accountsWith(mixed), [mixed.toLowerCase()]);
    const client = new WebClient(server.url);
    await client.get('/sign-up');
    const signUp = await client.post('/sign-up', { email: mixed.toLowerCase(), password: goodPassword });
    assert.equal(signUp.response.status, 409);
    assert.deepEqual(await accountsWith(mixed), [mixed.toLowerCase()]);
  });

  test('the store refuses a second account for an address in another letter case', async () => {
    const email = uniqueEmail();
    await createAccount(server.db, { email, plan: 'free', credits: 0 });
    await assert.rejects(createAccount(server.db, { email: email.toUpperCase(), plan: 'free', credits: 0 }), EmailTakenError);
  });

  test('cutout accounts set-password gives a CLI-made account a password, and its owner then signs in on the web in any case', async () => {
    const email = `Owner.${uniqueEmail()}`;
    await createAccount(server.db, { email, plan: 'paid', credits: 10 });
    const env = { CUTOUT_DATA_DIR: server.dataDir, ...(server.config.databaseUrl ? { DATABASE_URL: server.config.databaseUrl } : {}) };
    const run = await runCli(['accounts', 'set-password', '--email', email.toUpperCase(), '--json'], env, `${goodPassword}\n`);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).password_set, true);
    const client = new WebClient(server.url);
    await client.get('/sign-in');
    const signedIn = await client.post('/sign-in', { email: email.toUpperCase(), password: goodPassword });
    assert.equal(signedIn.response.status, 303);
    assert.equal((await client.get('/app/credits')).response.status, 200);

    // A reset signs out whoever held the old password.
    const reset = await runCli(['accounts', 'set-password', '--email', email], env, `another ${goodPassword}\n`);
    assert.equal(reset.code, 0, reset.stderr);
    const after = await client.get('/app/credits');
    assert.equal(after.response.status, 303);
    assert.match(after.response.headers.get('location') ?? '', /^\/sign-in/);
  });

  test('the password command refuses a short password and an unknown email, and changes nothing', async () => {
    const email = uniqueEmail();
    await createAccount(server.db, { email, plan: 'paid', credits: 1 });
    const set = (argv: string[], password: string) => passwordCommand(server.db, argv, Readable.from([password]));
    await assert.rejects(set(['--email', email], 'short'), /at least 10 characters/);
    await assert.rejects(set(['--email', `nobody-${email}`], goodPassword), /no account with email/);
    assert.equal((await server.db.selectFrom('web_credentials').innerJoin('accounts', 'accounts.id', 'web_credentials.account_id').select('accounts.email').where('accounts.email', '=', email).execute()).length, 0);
  });
});
