// The sign-in count on both engines, on a clock the tests set: a failure counts for exactly the
// window, so a guess made at the moment a refusal's Retry-After names is let through.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { takeSignInGuess } from '../../src/store/web-accounts-repository.ts';
import { signInWindowMs } from '../../src/web/sign-in-throttle.ts';
import { describeEachEngine, openTestStore } from '../support/engines.ts';

describeEachEngine('sign-in attempts', (engine) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  before(async () => {
    store = await openTestStore(engine);
  });
  after(() => store.close());

  let n = 0;
  /** An email and address no other test uses. */
  const guesser = () => ({ email: `guesser${++n}@example.com`, ip: `198.51.100.${n}` });
  const guess = (who: { email: string; ip: string }, now: number, emailLimit = 2) =>
    takeSignInGuess(store.db, { ...who, emailLimit, ipLimit: 20, windowMs: signInWindowMs }, now);

  test('an email past its limit is refused until the moment its oldest failure is a window old, and let through at that moment', async () => {
    const who = guesser();
    const t0 = Date.parse('2030-02-01T00:00:00Z');
    assert.equal((await guess(who, t0)).allowed, true);
    assert.equal((await guess(who, t0 + 60_000)).allowed, true);
    assert.deepEqual(await guess(who, t0 + 120_000), { allowed: false, retryAt: t0 + signInWindowMs });
    assert.deepEqual(await guess(who, t0 + signInWindowMs - 1), { allowed: false, retryAt: t0 + signInWindowMs });
    assert.equal((await guess(who, t0 + signInWindowMs)).allowed, true, 'the retry time a refusal names is when a guess is allowed');
    assert.deepEqual(await guess(who, t0 + signInWindowMs + 1), { allowed: false, retryAt: t0 + 60_000 + signInWindowMs });
  });

  test('with more failures in the window than a lowered limit allows, the wait runs until enough of them have aged out', async () => {
    const who = guesser();
    const t0 = Date.parse('2030-02-02T00:00:00Z');
    for (const at of [t0, t0 + 60_000, t0 + 120_000]) assert.equal((await guess(who, at, 3)).allowed, true);
    assert.deepEqual(await guess(who, t0 + 180_000, 2), { allowed: false, retryAt: t0 + 60_000 + signInWindowMs });
    assert.deepEqual(await guess(who, t0 + 180_000, 1), { allowed: false, retryAt: t0 + 120_000 + signInWindowMs });
  });
});
