// Request counts per API key and fixed window, kept in the database so that every API process
// serving it shares them (api/shared-rate-limiter.ts). The table is not in schema.ts: only this
// module reads or writes it.
import { sql } from 'kysely';
import { compiledOnce } from './compiled-once.ts';
import type { Db } from './database.ts';

interface RateWindowsTable {
  api_key_id: string;
  /** Epoch milliseconds at which the window begins. */
  window_start: number;
  count: number;
}

const withRateWindows = (db: Db) => db.withTables<{ rate_windows: RateWindowsTable }>();

// Runs on every authenticated request: one statement, one round trip, atomic under concurrent
// requests from any number of processes (the conflict makes the second writer update the row the
// first inserted).
const countOne = compiledOnce<{ count: number }, [string, number]>(
  (db, apiKeyId, windowStart) =>
    withRateWindows(db)
      .insertInto('rate_windows')
      .values({ api_key_id: apiKeyId, window_start: windowStart, count: sql<number>`1` })
      .onConflict((oc) => oc.columns(['api_key_id', 'window_start']).doUpdateSet({ count: sql<number>`rate_windows.count + 1` }))
      .returning('count'),
  2,
);

/** Counts one request of the key in the window and returns the window's count including it. */
export async function countRequest(db: Db, apiKeyId: string, windowStart: number): Promise<number> {
  const [row] = await countOne(db, apiKeyId, windowStart);
  if (!row) throw new Error('counting a request returned no row');
  return Number(row.count);
}

/** Forgets the windows that began before the given time. */
export async function deleteRateWindowsBefore(db: Db, windowStart: number): Promise<number> {
  const result = await withRateWindows(db).deleteFrom('rate_windows').where('window_start', '<', windowStart).executeTakeFirst();
  return Number(result.numDeletedRows);
}
