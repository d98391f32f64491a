import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryUntil } from '../../src/worker/retry.ts';

test('a database call that fails through a short outage is retried until it succeeds', async () => {
  let calls = 0;
  const retried: unknown[] = [];
  const result = await retryUntil(
    async () => {
      calls += 1;
      if (calls < 3) throw new Error(`outage ${calls}`);
      return 'done';
    },
    Date.now() + 10_000,
    (err) => retried.push(err),
  );
  assert.equal(result, 'done');
  assert.equal(calls, 3);
  assert.deepEqual(retried.map((e) => (e as Error).message), ['outage 1', 'outage 2']);
});

test('past the deadline the last error is thrown', async () => {
  let calls = 0;
  await assert.rejects(
    retryUntil(
      async () => {
        calls += 1;
        throw new Error(`still down ${calls}`);
      },
      Date.now() + 250,
      () => {},
    ),
    /still down/,
  );
  assert.ok(calls >= 2 && calls <= 3, `tried ${calls} times`);
});
