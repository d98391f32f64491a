// The sign-up count per address on both engines, on a clock the tests set: an attempt counts for
// exactly an hour, a burst cannot pass the limit together, and maintenance forgets old attempts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { takeSignUpAttempt } from '../../src/store/sign-up-attempts-repository.ts';
import { DiskUploadStore } from '../../src/storage/upload-store.ts';
import { runWebMaintenance } from '../../src/web/web-maintenance.ts';
import { signUpWindowMs } from '../../src/web/sign-up-throttle.ts';
import { describeEachEngine, openTestStore } from '../support/engines.ts';

const hourMs = 3_600_000;

describeEachEngine('sign-up attempts', (engine) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  before(async () => {
    store = await openTestStore(engine);
  });
  after(() => store.close());

  let n = 0;
  /** An address no other test uses. */
  const address = (): string => `198.51.100.${++n}`;
  const take = (ip: string, now: number, limit = 3) => takeSignUpAttempt(store.db, { ip, limit, windowMs: signUpWindowMs }, now);

  test('the window is an hour', () => {
    assert.equal(signUpWindowMs, hourMs);
  });

  test('past the limit an address is refused until its oldest attempt is an hour old, then it may sign up again', async () => {
    const ip = address();
    const t0 = Date.parse('2030-01-01T00:00:00Z');
    for (const at of [t0, t0 + 20 * 60_000, t0 + 40 * 60_000]) assert.deepEqual(await take(ip, at), { allowed: true });
    assert.deepEqual(await take(ip, t0 + 50 * 60_000), { allowed: false, retryAt: t0 + hourMs });
    assert.deepEqual(await take(ip, t0 + hourMs - 1), { allowed: false, retryAt: t0 + hourMs });
    assert.deepEqual(await take(ip, t0 + hourMs), { allowed: true }, 'the first attempt left the window');
    assert.deepEqual(await take(ip, t0 + hourMs + 1), { allowed: false, retryAt: t0 + 20 * 60_000 + hourMs });
    const rows = await store.db.selectFrom('sign_up_attempts').select('created_at').where('ip', '=', ip).execute();
    assert.equal(rows.length, 4, 'refused attempts are not recorded, so trying on does not prolong the wait');
  });

  test('a limit lowered since the attempts were made waits for enough of them to leave', async () => {
    const ip = address();
    const t0 = Date.parse('2030-01-02T00:00:00Z');
    for (const at of [t0, t0 + 60_000, t0 + 120_000]) assert.deepEqual(await take(ip, at), { allowed: true });
    assert.deepEqual(await take(ip, t0 + 180_000, 2), { allowed: false, retryAt: t0 + 60_000 + hourMs });
  });

  test('one address at its limit leaves another untouched', async () => {
    const [full, other] = [address(), address()];
    const now = Date.parse('2030-01-03T00:00:00Z');
    for (let i = 0; i < 3; i++) await take(full, now);
    assert.equal((await take(full, now)).allowed, false);
    assert.deepEqual(await take(other, now), { allowed: true });
  });

  test('twenty attempts at once from one address: exactly the limit of five is allowed', async () => {
    const ip = address();
    const now = Date.parse('2030-01-04T00:00:00Z');
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => take(ip, now, 5)));
    assert.equal(outcomes.filter((o) => o.allowed).length, 5);
    const rows = await store.db.selectFrom('sign_up_attempts').select('id').where('ip', '=', ip).execute();
    assert.equal(rows.length, 5);
  });

  test('web maintenance deletes sign-up attempts older than a day and keeps the rest', async () => {
    const ip = address();
    // Before the other tests' attempts, so this run finds only this test's old one.
    const now = Date.parse('2029-06-01T00:00:00Z');
    await take(ip, now - 25 * hourMs, 10);
    await take(ip, now - 2 * hourMs, 10);
    const uploads = new DiskUploadStore(path.join(store.dataDir, 'uploads'));
    const done = await runWebMaintenance({ db: store.db, uploads, config: { resultRetentionHours: 24 } }, now);
    assert.equal(done.signUps, 1);
    const left = await store.db.selectFrom('sign_up_attempts').select('created_at').where('ip', '=', ip).execute();
    assert.deepEqual(left.map((r) => Number(r.created_at)), [now - 2 * hourMs]);
  });
});
