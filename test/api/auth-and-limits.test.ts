import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { grantCredits } from '../../src/store/accounts-repository.ts';
import { deleteApiKey } from '../../src/store/api-keys-repository.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

const body = { image_url: 'https://images.example.test/photo.jpg' };

async function errorOf(res: Response): Promise<{ code: string; message: string; request_id: string }> {
  const json = (await res.json()) as { error: { code: string; message: string; request_id: string } };
  assert.equal(json.error.request_id, res.headers.get('x-request-id'));
  return json.error;
}

describeEachEngine('authentication', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({}, { engine });
  });
  after(() => server.close());

  // RFC 9110 §15.5.2: every 401 names the scheme that would be accepted; RFC 6750 §3.1: a bearer
  // key that was sent and refused is an invalid_token, a request without one gets the bare challenge.
  const challenge = 'Bearer realm="api"';
  const refused = `${challenge}, error="invalid_token"`;
  for (const [label, header, expected] of [
    ['a missing key', undefined, challenge],
    ['a malformed Authorization header', 'Token abc', challenge],
    ['an unknown key', `Bearer cut_${'x'.repeat(37)}`, refused],
    ['a key of the wrong shape', 'Bearer sk_live_123', refused],
  ] as const) {
    test(`${label} gets 401 invalid_api_key with a Bearer challenge on both endpoints`, async () => {
      const headers: Record<string, string> = header ? { authorization: header } : {};
      const create = await server.request('/api/v1/bg/removals', { ...createBody(body), headers: { ...headers, 'content-type': 'application/json' } });
      assert.equal(create.status, 401);
      assert.equal(create.headers.get('www-authenticate'), expected);
      assert.equal((await errorOf(create)).code, 'invalid_api_key');
      const get = await server.request('/api/v1/bg/removals/bgr_whatever', { headers });
      assert.equal(get.status, 401);
      assert.equal(get.headers.get('www-authenticate'), expected);
      assert.equal((await errorOf(get)).code, 'invalid_api_key');
    });
  }

  // RFC 9110 §11.4 and RFC 6750 §2.1: credentials are the scheme, then 1*SP, then the token. Any
  // number of spaces is the same header; a tab is not a space there and stays malformed.
  test('a key after several spaces is accepted, one after a tab or with text after it is not', async () => {
    const { key } = await server.account();
    for (const authorization of [`Bearer  ${key}`, `bearer   ${key}`]) {
      const res = await server.request('/api/v1/bg/removals/bgr_none', { headers: { authorization } });
      assert.equal(res.status, 404, JSON.stringify(authorization));
    }
    for (const authorization of [`Bearer\t${key}`, `Bearer ${key} extra`, `Bearer,${key}`]) {
      const res = await server.request('/api/v1/bg/removals/bgr_none', { headers: { authorization } });
      assert.equal(res.status, 401, JSON.stringify(authorization));
      assert.equal((await errorOf(res)).code, 'invalid_api_key');
    }
  });

  test('a deleted key gets 401 invalid_api_key', async () => {
    const { key, keyId } = await server.account();
    assert.equal((await server.request('/api/v1/bg/removals', { ...createBody(body), key })).status, 202);
    assert.ok(await deleteApiKey(server.db, keyId));
    const res = await server.request('/api/v1/bg/removals', { ...createBody(body), key });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), refused);
    assert.equal((await errorOf(res)).code, 'invalid_api_key');
  });

  test('a free account without a purchase gets 403 api_access_required, and a purchase unlocks it', async () => {
    const { key, accountId } = await server.account({ plan: 'free', credits: 10 });
    const res = await server.request('/api/v1/bg/removals', { ...createBody(body), key });
    assert.equal(res.status, 403);
    assert.equal((await errorOf(res)).code, 'api_access_required');
    await grantCredits(server.db, accountId, 5, true);
    assert.equal((await server.request('/api/v1/bg/removals', { ...createBody(body), key })).status, 202);
  });

  test('a grant that is not a purchase does not unlock API access', async () => {
    const { key, accountId } = await server.account({ plan: 'free', credits: 0 });
    await grantCredits(server.db, accountId, 5, false);
    assert.equal((await server.request('/api/v1/bg/removals', { ...createBody(body), key })).status, 403);
  });

  test('another account’s task is 404 task_not_found, like an unknown one', async () => {
    const owner = await server.account();
    const stranger = await server.account();
    const created = (await (await server.request('/api/v1/bg/removals', { ...createBody(body), key: owner.key })).json()) as { id: string };
    const mine = await server.request(`/api/v1/bg/removals/${created.id}`, { key: owner.key });
    assert.equal(mine.status, 200);
    const theirs = await server.request(`/api/v1/bg/removals/${created.id}`, { key: stranger.key });
    assert.equal(theirs.status, 404);
    assert.equal((await errorOf(theirs)).code, 'task_not_found');
    const unknown = await server.request('/api/v1/bg/removals/bgr_doesnotexist', { key: owner.key });
    assert.equal(unknown.status, 404);
    assert.equal((await errorOf(unknown)).code, 'task_not_found');
  });
});

describeEachEngine('rate and concurrency limits', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_RATE_LIMIT_PER_MINUTE: '5', CUTOUT_MAX_ACTIVE_TASKS: '2' }, { engine });
  });
  after(() => server.close());

  test('the sixth request in a minute with one key gets 429 rate_limit_exceeded with Retry-After, across endpoints', async () => {
    const { key } = await server.account();
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await server.request('/api/v1/bg/removals/bgr_none', { key });
      assert.equal(res.status, 404);
      assert.equal(res.headers.get('x-ratelimit-limit'), '5');
      remaining.push(res.headers.get('x-ratelimit-remaining') ?? '');
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      assert.ok(reset * 1000 > Date.now() && reset * 1000 <= Date.now() + 61_000, 'reset is a Unix time within the next minute');
    }
    assert.deepEqual(remaining, ['4', '3', '2', '1', '0']);
    const limited = await server.request('/api/v1/bg/removals', { ...createBody(body), key });
    assert.equal(limited.status, 429);
    assert.equal((await errorOf(limited)).code, 'rate_limit_exceeded');
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60);
    assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
  });

  test('the limit is per key: another key of the same account still passes', async () => {
    const first = await server.account();
    for (let i = 0; i < 6; i++) await server.request('/api/v1/bg/removals/bgr_none', { key: first.key });
    const other = await server.account();
    assert.equal((await server.request('/api/v1/bg/removals/bgr_none', { key: other.key })).status, 404);
  });

  test('a third queued task for one account gets 429 concurrency_limit with Retry-After', async () => {
    const { key } = await server.account();
    for (let i = 0; i < 2; i++) assert.equal((await server.request('/api/v1/bg/removals', { ...createBody(body), key })).status, 202);
    const res = await server.request('/api/v1/bg/removals', { ...createBody(body), key });
    assert.equal(res.status, 429);
    assert.equal((await errorOf(res)).code, 'concurrency_limit');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
  });
});
