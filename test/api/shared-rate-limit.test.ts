// On PostgreSQL several API processes serve one database behind a load balancer (README "More than
// one machine"); the per-key rate limit must hold across all of them, not per process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { SharedRateLimiter } from '../../src/api/shared-rate-limiter.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { postgresUrl } from '../support/engines.ts';

describe('the rate limit on PostgreSQL', { skip: postgresUrl ? false : 'CUTOUT_TEST_POSTGRES_URL is not set' }, () => {
  let first: TestServer;
  let second: TestServer;
  before(async () => {
    first = await startTestServer({ CUTOUT_RATE_LIMIT_PER_MINUTE: '3' }, { engine: 'postgres' });
    // The helper makes a database of its own for the second server too; it stays unused.
    second = await startTestServer({ CUTOUT_RATE_LIMIT_PER_MINUTE: '3', DATABASE_URL: first.config.databaseUrl! }, { engine: 'postgres' });
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  /** Polls an unknown task through the given servers in turn: status, remaining and reset of each answer. */
  async function pollThrough(servers: TestServer[], key: string): Promise<{ status: number; remaining: string | null; reset: string | null }[]> {
    const seen = [];
    for (const server of servers) {
      const res = await server.request('/api/v1/bg/removals/bgr_aaaaaaaaaaaaaaaaaaaa', { key });
      await res.arrayBuffer();
      seen.push({ status: res.status, remaining: res.headers.get('x-ratelimit-remaining'), reset: res.headers.get('x-ratelimit-reset') });
    }
    return seen;
  }

  test('two API servers over one database share one count per key', async () => {
    let seen;
    // A minute that turns mid-sequence starts a fresh count; then the sequence runs again with a new key.
    do {
      const { key } = await first.account();
      seen = await pollThrough([first, second, first, second, first], key);
    } while (new Set(seen.map((s) => s.reset)).size > 1);
    assert.deepEqual(
      seen.map((s) => [s.status, s.remaining]),
      [
        [404, '2'],
        [404, '1'],
        [404, '0'],
        [429, '0'],
        [429, '0'],
      ],
    );
  });

  test('another key is counted apart, on either server', async () => {
    const busy = await first.account();
    await pollThrough([first, second, first, second], busy.key);
    const other = await first.account();
    const [answer] = await pollThrough([second], other.key);
    assert.equal(answer?.status, 404);
  });

  test('the windows of past minutes are removed once a later minute begins', async () => {
    const sweepErrors: unknown[] = [];
    const limiter = new SharedRateLimiter(first.db, 3, (err) => sweepErrors.push(err));
    const minute = 60_000;
    const start = (Math.floor(Date.now() / minute) + 10) * minute;
    const windows = async () =>
      (await sql<{ window_start: number }>`select distinct window_start from rate_windows where window_start >= ${start} order by 1`.execute(first.db)).rows.map((r) => Number(r.window_start));

    assert.equal((await limiter.hit('key_a', start + 5)).remaining, 2);
    assert.equal((await limiter.hit('key_a', start + 10)).remaining, 1);
    assert.equal((await limiter.hit('key_a', start + minute + 1)).remaining, 2, 'a new minute starts a new count');
    assert.deepEqual(await windows(), [start, start + minute], 'the previous minute is kept while a slower clock may still count in it');
    const later = await limiter.hit('key_b', start + 2 * minute + 1);
    assert.equal(later.resetAt, start + 3 * minute);
    assert.deepEqual(await windows(), [start + minute, start + 2 * minute]);
    assert.deepEqual(sweepErrors, []);
  });

  test('a sweep of past windows that fails is reported, does not fail the request, and is tried again', async () => {
    const sweepErrors: unknown[] = [];
    const limiter = new SharedRateLimiter(first.db, 3, (err) => sweepErrors.push(err));
    const minute = 60_000;
    const start = (Math.floor(Date.now() / minute) + 20) * minute;
    await limiter.hit('key_c', start);
    // A trigger refuses deletes while counting still works, as a failing sweep would see it.
    await sql`create or replace function cutout_test_refuse_delete() returns trigger language plpgsql as $$ begin raise exception 'deletes refused'; end $$`.execute(first.db);
    await sql`create trigger cutout_test_refuse_delete before delete on rate_windows for each statement execute function cutout_test_refuse_delete()`.execute(first.db);
    try {
      assert.equal((await limiter.hit('key_c', start + 2 * minute)).remaining, 2);
      assert.equal(sweepErrors.length, 1);
    } finally {
      await sql`drop trigger cutout_test_refuse_delete on rate_windows`.execute(first.db);
      await sql`drop function cutout_test_refuse_delete()`.execute(first.db);
    }
    await limiter.hit('key_c', start + 2 * minute + 1);
    const left = await sql<{ n: number }>`select count(*)::int as n from rate_windows where api_key_id = 'key_c' and window_start < ${start + minute}`.execute(first.db);
    assert.equal(left.rows[0]?.n, 0, 'the next request swept what the failed sweep left');
    assert.equal(sweepErrors.length, 1);
  });
});
