import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { findAccount, listLedger } from '../../src/store/accounts-repository.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

const imageUrl = 'https://images.example.test/photo.jpg';

/** A create with the Idempotency-Key sent as each of `keys` on its own header line, which fetch cannot send. */
function postWithKeyLines(server: TestServer, key: string, keys: string[]): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ image_url: imageUrl });
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}/api/v1/bg/removals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': keys },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function post(server: TestServer, key: string, body: unknown, idempotencyKey?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  return server.request('/api/v1/bg/removals', { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body), key });
}

describeEachEngine('credits at creation', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_MAX_ACTIVE_TASKS: '100' }, { engine });
  });
  after(() => server.close());

  test('standard reserves 1 credit and high reserves 2, each recorded in the ledger', async () => {
    const { key, accountId } = await server.account({ credits: 10 });
    const standard = (await (await post(server, key, { image_url: imageUrl })).json()) as { id: string };
    const high = (await (await post(server, key, { image_url: imageUrl, precision: 'high' })).json()) as { id: string };
    const account = await findAccount(server.db, accountId);
    assert.equal(account?.creditsAvailable, 7);
    assert.equal(account?.creditsReserved, 3);
    const ledger = await listLedger(server.db, accountId);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.taskId, e.availableDelta, e.reservedDelta]),
      [
        ['grant', null, 10, 0],
        ['reserve', standard.id, -1, 1],
        ['reserve', high.id, -2, 2],
      ],
    );
  });

  test('a create the balance cannot cover gets 402 insufficient_credits and reserves nothing', async () => {
    const { key, accountId } = await server.account({ credits: 1 });
    const res = await post(server, key, { image_url: imageUrl, precision: 'hd' });
    assert.equal(res.status, 402);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'insufficient_credits');
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 1);
  });

  test('30 concurrent creates against 5 credits: exactly 5 are accepted and the balance never goes negative', async () => {
    const { key, accountId } = await server.account({ credits: 5 });
    const responses = await Promise.all(Array.from({ length: 30 }, () => post(server, key, { image_url: imageUrl })));
    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 202).length, 5);
    assert.equal(statuses.filter((s) => s === 402).length, 25);
    const account = await findAccount(server.db, accountId);
    assert.equal(account?.creditsAvailable, 0);
    assert.equal(account?.creditsReserved, 5);
    const ledger = await listLedger(server.db, accountId);
    assert.equal(ledger.filter((e) => e.kind === 'reserve').length, 5);
  });
});

describeEachEngine('idempotency', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_MAX_ACTIVE_TASKS: '100' }, { engine });
  });
  after(() => server.close());

  test('the same key with the same canonical body returns the original task without a new charge', async () => {
    const { key, accountId } = await server.account({ credits: 10 });
    const first = await post(server, key, { image_url: imageUrl, precision: 'hd' }, 'order-1');
    assert.equal(first.status, 202);
    const original = (await first.json()) as { id: string };
    // Same request spelled differently: other key order, defaults written out, hd resolved to high.
    const again = await post(server, key, `{"output_format":"png","subject":"auto","precision":"high","model":"bg-remover","image_url":"${imageUrl}"}`, 'order-1');
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(((await again.json()) as { id: string }).id, original.id);
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 8);
  });

  test('the same key with a different body gets 409 idempotency_conflict', async () => {
    const { key, accountId } = await server.account({ credits: 10 });
    assert.equal((await post(server, key, { image_url: imageUrl }, 'k-2')).status, 202);
    const res = await post(server, key, { image_url: imageUrl, output_format: 'webp' }, 'k-2');
    assert.equal(res.status, 409);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'idempotency_conflict');
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 9);
  });

  test('a key written in UTF-8 replays its task like any other', async () => {
    const { key } = await server.account({ credits: 10 });
    const utf8Key = Buffer.from('commande-été-😀'.repeat(8)).toString('latin1');
    const first = (await (await post(server, key, { image_url: imageUrl }, utf8Key)).json()) as { id: string };
    const again = await post(server, key, { image_url: imageUrl }, utf8Key);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(((await again.json()) as { id: string }).id, first.id);
  });

  // Node joins repeated header lines with ", ", so two keys would be read as one key "a, b": a
  // retry that sends only one of them would then make a second task and charge again.
  test('an Idempotency-Key sent twice gets 400 invalid_request naming the header, and no task', async () => {
    const { key, accountId } = await server.account({ credits: 10 });
    for (const keys of [['twice-a', 'twice-b'], ['same', 'same']]) {
      const res = await postWithKeyLines(server, key, keys);
      assert.equal(res.status, 400, res.body);
      const { error } = JSON.parse(res.body) as { error: { code: string; message: string } };
      assert.equal(error.code, 'invalid_request');
      assert.match(error.message, /Idempotency-Key/);
    }
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 10);
  });

  test('a key with a comma in it, sent once, replays its task like any other', async () => {
    const { key } = await server.account({ credits: 10 });
    const first = await postWithKeyLines(server, key, ['order, 42']);
    assert.equal(first.status, 202, first.body);
    const again = await post(server, key, { image_url: imageUrl }, 'order, 42');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(((await again.json()) as { id: string }).id, (JSON.parse(first.body) as { id: string }).id);
  });

  test('keys are scoped per account: another account may use the same key', async () => {
    const a = await server.account();
    const b = await server.account();
    const ta = (await (await post(server, a.key, { image_url: imageUrl }, 'shared')).json()) as { id: string };
    const resB = await post(server, b.key, { image_url: `${imageUrl}?other` }, 'shared');
    assert.equal(resB.status, 202);
    assert.notEqual(((await resB.json()) as { id: string }).id, ta.id);
  });

  test('20 concurrent creates with one key create exactly one task and charge once', async () => {
    const { key, accountId } = await server.account({ credits: 50 });
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(server, key, { image_url: imageUrl }, 'burst')));
    assert.deepEqual(new Set(responses.map((r) => r.status)), new Set([202]));
    const ids = new Set(await Promise.all(responses.map(async (r) => ((await r.json()) as { id: string }).id)));
    assert.equal(ids.size, 1);
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 49);
  });

  test('concurrent creates with one key and two different bodies create one task: the same body gets it, the other 409', async () => {
    const { key, accountId } = await server.account({ credits: 50 });
    const bodies = Array.from({ length: 20 }, (_, i) => ({ image_url: imageUrl, output_format: i % 2 ? 'webp' : 'png' }));
    const responses = await Promise.all(bodies.map((body) => post(server, key, body, 'contested')));
    const answers = await Promise.all(responses.map(async (r) => ({ status: r.status, body: (await r.json()) as { id?: string; input?: { output_format: string }; error?: { code: string } } })));
    const created = answers.filter((a) => a.status === 202);
    const winner = created[0]?.body.input?.output_format;
    assert.ok(winner);
    assert.equal(new Set(created.map((a) => a.body.id)).size, 1, 'one task');
    assert.deepEqual(
      answers.map((a) => (a.status === 202 ? a.body.input?.output_format : a.body.error?.code)),
      bodies.map((b) => (b.output_format === winner ? winner : 'idempotency_conflict')),
    );
    const reserves = (await listLedger(server.db, accountId)).filter((e) => e.kind === 'reserve');
    assert.deepEqual(reserves.map((e) => e.taskId), [created[0]?.body.id]);
    assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 49);
  });

  test('a key is kept for 24 hours and forgotten after that', async () => {
    const { key } = await server.account({ credits: 10 });
    const original = (await (await post(server, key, { image_url: imageUrl }, 'daily')).json()) as { id: string };
    const hour = 3_600_000;
    await server.maintenance.run(Date.now() + 23 * hour);
    const replay = (await (await post(server, key, { image_url: imageUrl }, 'daily')).json()) as { id: string };
    assert.equal(replay.id, original.id);
    await server.maintenance.run(Date.now() + 25 * hour);
    const fresh = await post(server, key, { image_url: imageUrl }, 'daily');
    assert.equal(fresh.status, 202);
    assert.notEqual(((await fresh.json()) as { id: string }).id, original.id);
  });
});
