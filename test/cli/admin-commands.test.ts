import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { json, runCli } from '../support/cli.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

describeEachEngine('the cutout admin CLI acts on the same data as the server', (engine) => {
  let server: TestServer;
  let env: Record<string, string>;
  before(async () => {
    server = await startTestServer({}, { engine });
    env = { CUTOUT_DATA_DIR: server.dataDir, ...(server.config.databaseUrl ? { DATABASE_URL: server.config.databaseUrl } : {}) };
  });
  after(() => server.close());

  test('an operator creates an account, grants a purchase, issues a key the API accepts, and deletes it', async () => {
    const created = json(await runCli(['accounts', 'create', '--email', 'ops@example.test', '--plan', 'free', '--credits', '3', '--json'], env));
    assert.match(String(created.id), /^acct_/);
    assert.equal(created.plan, 'free');
    assert.equal(created.credits, 3);
    assert.equal(created.api_access, false);
    const accountId = String(created.id);

    const key = json(await runCli(['keys', 'create', '--account', accountId, '--name', 'ci', '--json'], env));
    assert.match(String(key.key), /^cut_[0-9a-z]{37}$/);
    assert.match(String(key.id), /^key_/);
    const apiKey = String(key.key);

    const refused = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: 'https://example.test/a.png' }), key: apiKey });
    assert.equal(refused.status, 403, 'a free account without a purchase has no API access');

    const granted = json(await runCli(['credits', 'grant', '--account', accountId, '--amount', '10', '--purchase', '--json'], env));
    assert.equal(granted.credits, 13);
    assert.equal(granted.api_access, true);

    const shown = json(await runCli(['accounts', 'show', accountId, '--json'], env));
    assert.equal(shown.credits, 13);
    assert.equal(shown.plan, 'free');
    assert.equal(shown.api_access, true);

    const accepted = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: 'https://example.test/a.png' }), key: apiKey });
    assert.equal(accepted.status, 202);
    assert.equal(json(await runCli(['accounts', 'show', accountId, '--json'], env)).credits, 12);

    const listed = json(await runCli(['keys', 'list', '--account', accountId, '--json'], env));
    const keys = listed.keys as { id: string; prefix: string; name: string; key?: string }[];
    assert.equal(keys.length, 1);
    assert.equal(keys[0]?.id, key.id);
    assert.equal(keys[0]?.name, 'ci');
    assert.ok(apiKey.startsWith(keys[0]?.prefix ?? '-'));
    assert.equal(keys[0]?.key, undefined, 'the full key is never listed');

    const deleted = json(await runCli(['keys', 'delete', String(key.id), '--json'], env));
    assert.equal(deleted.deleted, true);
    const after = await server.request('/api/v1/bg/removals/bgr_x', { key: apiKey });
    assert.equal(after.status, 401);
  });

  test('bad input is refused with a message and a non-zero exit', async () => {
    const badEmail = await runCli(['accounts', 'create', '--email', 'not-an-email', '--json'], env);
    assert.equal(badEmail.code, 2);
    assert.equal((JSON.parse(badEmail.stdout) as { error: { code: string; message: string } }).error.code, 'invalid_usage');
    assert.match(badEmail.stdout, /--email/);
    const badAmount = await runCli(['credits', 'grant', '--account', 'acct_x', '--amount', '-4'], env);
    assert.notEqual(badAmount.code, 0);
    assert.match(badAmount.stderr, /--amount/);
    const unknownAccount = await runCli(['accounts', 'show', 'acct_missing', '--json'], env);
    assert.equal(unknownAccount.code, 1);
    assert.deepEqual(JSON.parse(unknownAccount.stdout), { error: { code: 'account_not_found', message: 'no account acct_missing' } });
    assert.equal(unknownAccount.stderr, '');
    const textMode = await runCli(['accounts', 'show', 'acct_missing'], env);
    assert.equal(textMode.stderr, 'cutout: account_not_found: no account acct_missing\n');
  });

  test('stray operands are refused, not ignored: keys delete K1 K2 deletes nothing', async () => {
    const accountId = String(json(await runCli(['accounts', 'create', '--email', 'stray@example.test', '--plan', 'paid', '--json'], env)).id);
    const k1 = String(json(await runCli(['keys', 'create', '--account', accountId, '--json'], env)).id);
    const k2 = String(json(await runCli(['keys', 'create', '--account', accountId, '--json'], env)).id);
    const both = await runCli(['keys', 'delete', k1, k2], env);
    assert.equal(both.code, 2);
    assert.match(both.stderr, new RegExp(`invalid_usage: unexpected argument "${k2}"`));
    assert.equal((json(await runCli(['keys', 'list', '--account', accountId, '--json'], env)).keys as unknown[]).length, 2);
    const create = await runCli(['accounts', 'create', 'stray', '--email', 'stray2@example.test'], env);
    assert.equal(create.code, 2);
    assert.match(create.stderr, /unexpected argument "stray"/);
    assert.equal((await runCli(['accounts', 'show', accountId, 'extra'], env)).code, 2);
  });

  test('numbers are decimal digits only: blank, hex and exponents are refused', async () => {
    for (const credits of ['', ' ', '0x10', '1e3', '-1', '2.5']) {
      const run = await runCli(['accounts', 'create', '--email', 'num@example.test', '--credits', credits, '--json'], env);
      assert.equal(run.code, 2, `--credits ${JSON.stringify(credits)}: ${run.stdout}`);
      assert.match(run.stdout, /"code":"invalid_usage".*--credits/);
    }
    const grant = await runCli(['credits', 'grant', '--account', 'acct_x', '--amount', '0x10'], env);
    assert.equal(grant.code, 2);
    assert.match(grant.stderr, /--amount: must be a whole number/);
    assert.equal(json(await runCli(['accounts', 'create', '--email', 'num@example.test', '--credits', '0010', '--json'], env)).credits, 10);
  });

  test('keys create refuses a blank name or one with control characters, as the web form does, so keys list stays one line a key', async () => {
    const accountId = String(json(await runCli(['accounts', 'create', '--email', 'names@example.test', '--plan', 'paid', '--json'], env)).id);
    for (const name of ['', '   ', 'ci\nkey_forged  cut_abc', 'red\u001b[31m', 'tab\there', 'del\u007f']) {
      const run = await runCli(['keys', 'create', '--account', accountId, '--name', name], env);
      assert.equal(run.code, 2, `--name ${JSON.stringify(name)}: ${run.stdout}`);
      assert.match(run.stderr, /^cutout: invalid_usage: --name: /);
      assert.equal(run.stdout, '');
    }
    const asJson = await runCli(['keys', 'create', '--account', accountId, '--name', 'a\rb', '--json'], env);
    assert.equal(asJson.code, 2);
    assert.equal((JSON.parse(asJson.stdout) as { error: { code: string } }).error.code, 'invalid_usage');
    assert.equal((json(await runCli(['keys', 'list', '--account', accountId, '--json'], env)).keys as unknown[]).length, 0, 'no key was made');
    const spaced = json(await runCli(['keys', 'create', '--account', accountId, '--name', '  laptop  ', '--json'], env));
    assert.equal(spaced.name, 'laptop', 'surrounding spaces are trimmed, as in the web form');
    const listed = await runCli(['keys', 'list', '--account', accountId], env);
    assert.equal(listed.stdout.trim().split('\n').length, 1);
  });

  test('a key for an account without API access is issued with a warning that the API refuses it', async () => {
    const free = String(json(await runCli(['accounts', 'create', '--email', 'nokey@example.test', '--json'], env)).id);
    const run = await runCli(['keys', 'create', '--account', free, '--json'], env);
    assert.match(String(json(run).key), /^cut_/);
    assert.match(run.stderr, /^cutout: warning: account acct_\w+ has no API access .*api_access_required/);
    const paid = String(json(await runCli(['accounts', 'create', '--email', 'haskey@example.test', '--plan', 'paid', '--json'], env)).id);
    assert.equal((await runCli(['keys', 'create', '--account', paid, '--json'], env)).stderr, '');
  });

  test('a grant past the largest balance an account can hold is refused with a clear message and changes nothing', async () => {
    const accountId = String(json(await runCli(['accounts', 'create', '--email', 'rich@example.test', '--credits', '5', '--json'], env)).id);
    const refused = await runCli(['credits', 'grant', '--account', accountId, '--amount', '3000000000'], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /past 2147483647 credits/);
    assert.equal(json(await runCli(['accounts', 'show', accountId, '--json'], env)).credits, 5);
    assert.match(refused.stderr, /^cutout: credit_limit_exceeded: /);
    const tooBig = await runCli(['accounts', 'create', '--email', 'richer@example.test', '--credits', '2147483648'], env);
    assert.equal(tooBig.code, 1);
    assert.equal(
      tooBig.stderr,
      'cutout: credit_limit_exceeded: --credits 2147483648 is more than an account can hold (2147483647, available and reserved together); no account was created\n',
    );
    const tooBigJson = await runCli(['accounts', 'create', '--email', 'richer@example.test', '--credits', '3000000000', '--json'], env);
    assert.equal(tooBigJson.code, 1);
    assert.equal((JSON.parse(tooBigJson.stdout) as { error: { code: string } }).error.code, 'credit_limit_exceeded');
    assert.doesNotMatch(tooBigJson.stdout, /acct_/, 'no id of an account that was never created');
  });

  test('a bad environment value stops the command with a clear message', async () => {
    const run = await runCli(['accounts', 'show', 'acct_x'], { ...env, CUTOUT_MAX_ACTIVE_TASKS: 'lots' });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^cutout: invalid_configuration: Invalid configuration:\n {2}CUTOUT_MAX_ACTIVE_TASKS/);
  });
});

test("while the server holds a SQLite file's write lock past the busy timeout, a command that reads still answers, and one that writes fails in one line with database_unavailable, --json's stdout staying one object", async () => {
  const server = await startTestServer();
  const holder = new SQLite(path.join(server.dataDir, 'cutout.sqlite'));
  try {
    holder.exec('begin immediate');
    const listed = await runCli(['keys', 'list', '--account', 'acct_x', '--json'], { CUTOUT_DATA_DIR: server.dataDir });
    assert.equal((JSON.parse(listed.stdout) as { error: { code: string } }).error.code, 'account_not_found', listed.stderr);
    const shown = await runCli(['accounts', 'show', 'acct_x'], { CUTOUT_DATA_DIR: server.dataDir });
    assert.match(shown.stderr, /^cutout: account_not_found: /);
    const asJson = await runCli(['accounts', 'create', '--email', 'locked@example.test', '--json'], { CUTOUT_DATA_DIR: server.dataDir });
    assert.equal(asJson.code, 1);
    assert.equal(asJson.stderr, '');
    assert.equal((JSON.parse(asJson.stdout) as { error: { code: string } }).error.code, 'database_unavailable');
    const asText = await runCli(['credits', 'grant', '--account', 'acct_x', '--amount', '5'], { CUTOUT_DATA_DIR: server.dataDir });
    assert.equal(asText.code, 1);
    assert.match(asText.stderr, /^cutout: database_unavailable: the database is busy or cannot be reached \(database is locked\); try again shortly\n$/);
  } finally {
    holder.exec('rollback');
    holder.close();
    await server.close();
  }
});
