// The Credits page of a busy account shows its newest ledger entries a page at a time, with a link
// to the older ones, instead of the whole ledger at once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describeEachEngine('credits ledger pages', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({}, { engine });
  });
  after(async () => server.close());

  const rowsOf = (body: string): string[] => [...body.matchAll(/<td data-label="Task">(?:<a href="[^"]+">)?([^<]+)</g)].map((m) => m[1] ?? '');
  const olderLink = (body: string): string | undefined => /<a href="(\/app\/credits\?before=\d+)"[^>]*>Older entries/.exec(body)?.[1];

  test('250 task entries and the sign-up grant: pages of 100, newest first, then the oldest with the grant', async () => {
    const client = new WebClient(server.url);
    const email = uniqueEmail();
    await client.signUp(email, goodPassword);
    const { id } = await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    const task = (i: number): string => `bgr_${String(i).padStart(20, '0')}`;
    await server.db
      .insertInto('credit_ledger')
      .values(Array.from({ length: 250 }, (_, i) => ({ account_id: id, task_id: task(i), kind: 'reserve' as const, available_delta: -1, reserved_delta: 1, created_at: Date.now() })))
      .execute();

    const first = await client.get('/app/credits');
    assert.equal(first.response.status, 200);
    assert.deepEqual(rowsOf(first.body), Array.from({ length: 100 }, (_, i) => task(249 - i)));
    const second = await client.get(olderLink(first.body) ?? 'no older link');
    assert.deepEqual(rowsOf(second.body), Array.from({ length: 100 }, (_, i) => task(149 - i)));
    assert.match(second.body, /<a href="\/app\/credits"[^>]*>Newest entries/);
    const last = await client.get(olderLink(second.body) ?? 'no older link');
    assert.deepEqual(rowsOf(last.body), [...Array.from({ length: 50 }, (_, i) => task(49 - i)), '—']);
    assert.match(last.body, /Grant/);
    assert.equal(olderLink(last.body), undefined);
  });
});
