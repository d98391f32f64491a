import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createAccount } from '../../src/store/accounts-repository.ts';
import { authenticateApiKey, createApiKey } from '../../src/store/api-keys-repository.ts';
import { inTransaction, openDatabase, type Db } from '../../src/store/database.ts';
import { readNow } from '../../src/store/sqlite-connection.ts';

describe('reads on the SQLite store while its one connection is in use', () => {
  let dir: string;
  let db: Db;
  let key: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-sqlite-connection-'));
    db = await openDatabase({ dataDir: dir });
    const account = await createAccount(db, { email: 'reads@example.test', plan: 'paid', credits: 1 });
    ({ key } = await createApiKey(db, account.id, 'reads'));
  });
  after(async () => {
    await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a key looked up while another request deletes it in a transaction it then rolls back still works', async () => {
    let lookup: Promise<unknown> | undefined;
    let answeredInside = false;
    await assert.rejects(
      inTransaction(db, async (tx) => {
        await tx.updateTable('api_keys').set({ deleted_at: Date.now() }).execute();
        lookup = authenticateApiKey(db, key).then((found) => {
          answeredInside = true;
          return found;
        });
        await nextTurn();
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal(answeredInside, false, 'the lookup waited for the transaction to end');
    assert.ok(await lookup, 'the deletion that was rolled back never showed');
  });

  test('a key looked up just after a transaction that deletes it was started is refused: the lookup comes after it', async () => {
    const deletion = inTransaction(db, (tx) => tx.updateTable('api_keys').set({ deleted_at: Date.now() }).execute());
    const lookup = authenticateApiKey(db, key);
    await deletion;
    assert.equal(await lookup, undefined);
    await db.updateTable('api_keys').set({ deleted_at: null }).execute();
    assert.ok(await authenticateApiKey(db, key));
  });

  test('a read while the connection is free is answered at once; while it is held, it is left to the queue', async () => {
    const sql = 'select count(*) as n from api_keys';
    assert.deepEqual(readNow(db, sql, []), [{ n: 1 }]);
    let duringTransaction: unknown;
    await inTransaction(db, async () => {
      duringTransaction = readNow(db, sql, []);
    });
    assert.equal(duringTransaction, undefined);
    assert.deepEqual(readNow(db, sql, []), [{ n: 1 }]);
  });

  test('a write is never run outside the queue, and a closed store answers nothing at once', async () => {
    assert.equal(readNow(db, 'update api_keys set name = name', []), undefined);
    const other = await openDatabase({ dataDir: dir });
    await other.destroy();
    assert.equal(readNow(other, 'select 1 as one', []), undefined);
  });
});
