// Request counts per API key and fixed window, kept in PostgreSQL so that every API process serving
// it shares them (api/shared-rate-limiter.ts; a single-process SQLite server counts in memory). The
// table is not in schema.ts: only this module reads or writes it.
import { z } from 'zod';
import { postgresPool, type Db } from './database.ts';

interface RateWindowsTable {
  api_key_id: string;
  /** Epoch milliseconds at which the window begins. */
  window_start: number;
  count: number;
}

const withRateWindows = (db: Db) => db.withTables<{ rate_windows: RateWindowsTable }>();

// Runs on every authenticated request: one statement, one round trip, atomic under concurrent
// requests from any number of processes (the conflict makes the second writer update the row the
// first inserted). A count lost in a database crash only lets a key a few more requests in that
// minute, so, like the heartbeat (lease-postgres.ts), the statement does not wait for the WAL flush
// (set_config(…, true) lasts until its own commit).
const countOne = `
  with relaxed as (select set_config('synchronous_commit', 'off', true) as setting)
  insert into rate_windows (api_key_id, window_start, count)
  select $1, $2, 1 from relaxed
  on conflict (api_key_id, window_start) do update set count = rate_windows.count + 1
  returning count`;

const countRow = z.object({ count: z.coerce.number().int().positive() });

/** Counts one request of the key in the window and returns the window's count including it. */
export async function countRequest(db: Db, apiKeyId: string, windowStart: number): Promise<number> {
  const { rows } = await postgresPool(db).query({ name: 'cutout-rate-count', text: countOne, values: [apiKeyId, windowStart] });
  return countRow.parse(rows[0]).count;
}

/** Forgets the windows that began before the given time. */
export async function deleteRateWindowsBefore(db: Db, windowStart: number): Promise<number> {
  const result = await withRateWindows(db).deleteFrom('rate_windows').where('window_start', '<', windowStart).executeTakeFirst();
  return Number(result.numDeletedRows);
}
