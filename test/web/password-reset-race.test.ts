// An operator's password reset signs out every session of the account (README, Accounts), and
// that holds for a sign-in that checked the old password while the reset was being made: an
// attacker signing in over and over with a stolen password must not keep a session through it.
// Only PostgreSQL lets a test hold the reset half-way (row locks, read committed); SQLite
// serialises the writes the same fix relies on.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { inTransaction } from '../../src/store/database.ts';
import { replacePassword } from '../../src/store/web-accounts-repository.ts';
import { hashPassword } from '../../src/web/passwords.ts';
import { postgresUrl } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describe('a password reset against a sign-in in flight [postgres]', { skip: postgresUrl ? false : 'needs CUTOUT_TEST_POSTGRES_URL' }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_WEB_SIGN_UPS_PER_HOUR: '1000' }, { engine: 'postgres' });
  });
  after(async () => server.close());

  /** Statements of this database waiting on a lock held by another transaction. */
  async function waitingOnLocks(): Promise<number> {
    const { rows } = await sql<{ n: string }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(server.db);
    return Number(rows[0]?.n);
  }

  /** Resolves once `done` has settled or `count` statements wait on locks, whichever comes first. */
  async function settledOrWaiting(done: Promise<unknown>, count: number): Promise<void> {
    let settled = false;
    void done.then(
      () => (settled = true),
      () => (settled = true),
    );
    const deadline = Date.now() + 10_000;
    while (!settled && (await waitingOnLocks()) < count) {
      if (Date.now() > deadline) throw new Error(`neither settled nor ${count} statements waiting on locks within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  test('a sign-in with the old password that checks it while the reset is being made keeps no session after it', async () => {
    const email = uniqueEmail();
    const owner = new WebClient(server.url);
    await owner.signUp(email, goodPassword);
    const { id } = await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    const attacker = new WebClient(server.url);
    await attacker.get('/sign-in');

    // The owner's session row is held, so the reset stops at its DELETE of the sessions, after it
    // has written the new password but before it commits.
    let releaseHold!: () => void;
    const held = new Promise<void>((resolve) => (releaseHold = resolve));
    let holding!: () => void;
    const holdTaken = new Promise<void>((resolve) => (holding = resolve));
    const hold = inTransaction(server.db, async (tx) => {
      await tx.selectFrom('web_sessions').select('id').where('account_id', '=', id).forUpdate().execute();
      holding();
      await held;
    });
    await holdTaken;
    const reset = replacePassword(server.db, id, await hashPassword('a brand new password'));
    await settledOrWaiting(reset, 1);

    const signIn = attacker.post('/sign-in', { email, password: goodPassword });
    await settledOrWaiting(signIn, 2);
    releaseHold();
    await hold;
    await reset;
    await signIn;

    const { response } = await attacker.get('/app/remove');
    assert.equal(response.status, 303, 'the sign-in made during the reset has no session once the reset is done');
    assert.equal(response.headers.get('location'), '/sign-in?next=%2Fapp%2Fremove');
    assert.equal(
      Number((await server.db.selectFrom('web_sessions').select((eb) => eb.fn.countAll().as('n')).where('account_id', '=', id).executeTakeFirstOrThrow()).n),
      0,
      'no session of the account is left',
    );
  });
});
