import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { bootstrapLocalAccount } from '../../src/bootstrap.ts';
import { countAccounts } from '../../src/store/accounts-repository.ts';
import { describeEachEngine, openTestStore } from '../support/engines.ts';

describeEachEngine('several processes starting at once on an empty database', (engine) => {
  test('create the bootstrap account and key exactly once, and none of them fails', async () => {
    const store = await openTestStore(engine);
    try {
      const printed: string[] = [];
      const results = await Promise.all(Array.from({ length: 4 }, () => bootstrapLocalAccount(store.db, pino({ level: 'silent' }), (t) => printed.push(t))));
      assert.equal(results.filter((r) => r !== undefined).length, 1);
      assert.equal(printed.length, 1);
      assert.equal(await countAccounts(store.db), 1);
    } finally {
      await store.close();
    }
  });
});
