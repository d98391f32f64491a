import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount, CreditLimitError, EmailTakenError, findAccount, grantCredits, InvalidEmailError, listLedger, maxCredits } from '../../src/store/accounts-repository.ts';
import { claimNextTask, failTask } from '../../src/store/task-queue.ts';
import { createTask } from '../../src/store/tasks-repository.ts';
import { up as lowerCaseEmails } from '../../src/store/migrations/006-email-case.ts';
import { describeEachEngine, openTestStore } from '../support/engines.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;

describeEachEngine('accounts', (engine) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  before(async () => {
    store = await openTestStore(engine);
  });
  after(() => store.close());

  const email = (name: string): string => `${name}-${Date.now()}-${Math.random()}@example.test`;

  test('sign-ups racing with one email: exactly one account is made, every other gets email_taken', async () => {
    const shared = email('race');
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => createAccount(store.db, { email: shared, plan: 'free', credits: 3 })));
    const made = outcomes.filter((o) => o.status === 'fulfilled');
    assert.equal(made.length, 1);
    for (const o of outcomes) {
      if (o.status === 'rejected') assert.ok(o.reason instanceof EmailTakenError && o.reason.code === 'email_taken', String(o.reason));
    }
  });

  test('an email past 254 characters is refused with invalid_email before the store, on both engines', async () => {
    const tooLong = `${'x'.repeat(9000)}@example.test`;
    await assert.rejects(createAccount(store.db, { email: tooLong, plan: 'free', credits: 1 }), (err) => err instanceof InvalidEmailError && err.code === 'invalid_email');
    assert.equal(await store.db.selectFrom('accounts').select('id').where('email', '=', tooLong).executeTakeFirst(), undefined);
  });

  test('emails stored in mixed case before 006 are lower-cased, except two that differ only in case, which stay for the operator', async () => {
    const tag = `${Date.now()}`;
    const legacy = (id: string, email: string) => ({ id, email, plan: 'paid' as const, has_purchase: 0, credits_available: 0, credits_reserved: 0, created_at: 0 });
    await store.db
      .insertInto('accounts')
      .values([legacy(`acct_lone${tag}`, `Lone.${tag}@Example.test`), legacy(`acct_twina${tag}`, `Twin.${tag}@example.test`), legacy(`acct_twinb${tag}`, `TWIN.${tag}@example.test`)])
      .execute();
    await lowerCaseEmails(store.db as never);
    const emails = await store.db.selectFrom('accounts').select(['id', 'email']).where('id', 'like', `%${tag}`).orderBy('id').execute();
    assert.deepEqual(emails.map((r) => r.email), [`lone.${tag}@example.test`, `Twin.${tag}@example.test`, `TWIN.${tag}@example.test`]);
    // A third account for the twins' address is refused: the sign-up check compares without case.
    await assert.rejects(createAccount(store.db, { email: `twin.${tag}@example.test`, plan: 'free', credits: 0 }), EmailTakenError);
  });

  test('a grant up to the largest balance is kept; one past it is refused with credit_limit_exceeded and changes nothing', async () => {
    const account = await createAccount(store.db, { email: email('grant'), plan: 'free', credits: 5 });
    const full = await grantCredits(store.db, account.id, maxCredits - 5, false);
    assert.equal(full.creditsAvailable, maxCredits);
    for (const amount of [1, 3_000_000_000]) {
      await assert.rejects(grantCredits(store.db, account.id, amount, true), (err: unknown) => err instanceof CreditLimitError && err.code === 'credit_limit_exceeded');
    }
    const after = await findAccount(store.db, account.id);
    assert.equal(after?.creditsAvailable, maxCredits);
    assert.equal(after?.apiAccess, false, 'a refused purchase is not recorded');
    assert.deepEqual((await listLedger(store.db, account.id)).map((e) => e.availableDelta), [5, maxCredits - 5]);
  });

  test('an account cannot be created holding more than the largest balance', async () => {
    const address = email('big');
    await assert.rejects(createAccount(store.db, { email: address, plan: 'free', credits: 3_000_000_000 }), CreditLimitError);
    await assert.doesNotReject(createAccount(store.db, { email: address, plan: 'free', credits: 1 }), 'the refused account was not made');
  });

  test('reserved credits count toward the largest balance, so a later refund always fits', async () => {
    const account = await createAccount(store.db, { email: email('reserved'), plan: 'paid', credits: 10 });
    await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 10 });
    await assert.rejects(grantCredits(store.db, account.id, maxCredits - 9, false), CreditLimitError);
    await grantCredits(store.db, account.id, maxCredits - 10, false);
    const claimed = await claimNextTask(store.db, { leaseMs: 60_000, maxAttempts: 3 });
    assert.ok(claimed);
    assert.ok(await failTask(store.db, claimed.task.id, claimed.leaseToken, { code: 'processing_failed', message: 'refunded' }));
    const after = await findAccount(store.db, account.id);
    assert.equal(after?.creditsAvailable, maxCredits);
    assert.equal(after?.creditsReserved, 0);
  });

  test('an account already at the largest balance with credits reserved (made before the bound) is refused a grant cleanly', async () => {
    const account = await createAccount(store.db, { email: email('legacy'), plan: 'paid', credits: 10 });
    await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 10 });
    await store.db.updateTable('accounts').set({ credits_available: maxCredits }).where('id', '=', account.id).execute();
    await assert.rejects(grantCredits(store.db, account.id, 1, false), CreditLimitError);
    assert.equal((await findAccount(store.db, account.id))?.creditsAvailable, maxCredits);
  });
});
