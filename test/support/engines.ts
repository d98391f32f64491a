// The suites that touch the store run once per engine: always on SQLite, and on PostgreSQL when
// CUTOUT_TEST_POSTGRES_URL names a server on loopback (.ci/run sets it when PostgreSQL is there).
// Each PostgreSQL test server gets a fresh database, dropped when it closes. When the variable is
// set, an unreachable server fails the run: it never silently skips to SQLite only.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe } from 'node:test';
import pg from 'pg';
import { openDatabase, type Db, type Engine } from '../../src/store/database.ts';

export const postgresUrl = process.env.CUTOUT_TEST_POSTGRES_URL || undefined;
export const testEngines: Engine[] = postgresUrl ? ['sqlite', 'postgres'] : ['sqlite'];

/** describe() once per engine; the suite name says which. */
export function describeEachEngine(name: string, fn: (engine: Engine) => void): void {
  for (const engine of testEngines) describe(`${name} [${engine}]`, () => fn(engine));
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  if (!postgresUrl) throw new Error('CUTOUT_TEST_POSTGRES_URL is not set');
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`CUTOUT_TEST_POSTGRES_URL is set but PostgreSQL at ${postgresUrl} is unreachable: ${(err as Error).message}`);
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `cutout_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(postgresUrl ?? '');
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

/** Terminates every server connection to the database, as a PostgreSQL restart or failover would. */
export async function terminateConnections(databaseUrl: string): Promise<number> {
  const name = new URL(databaseUrl).pathname.slice(1);
  return admin(async (c) => {
    const res = await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
    return res.rowCount ?? 0;
  });
}

/** A migrated store of the given engine in a fresh SQLite folder or PostgreSQL database. */
export async function openTestStore(engine: Engine): Promise<{ db: Db; dataDir: string; databaseUrl: string | undefined; close(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-store-'));
  const database = engine === 'postgres' ? await createTestDatabase() : undefined;
  const db = await openDatabase({ dataDir, databaseUrl: database?.url, poolSize: 20 });
  return {
    db,
    dataDir,
    databaseUrl: database?.url,
    async close() {
      await db.destroy();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
