// Opens the store and applies versioned migrations. SQLite is the embedded default.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql, type Migration } from 'kysely';
import type { Database } from './schema.ts';
import * as initial from './migrations/001-initial.ts';
import * as web from './migrations/002-web.ts';

const migrations: Record<string, Migration> = {
  '001-initial': initial,
  '002-web': web,
};

export type Db = Kysely<Database>;
/** A handle bound to one connection inside a transaction. */
export type Tx = Kysely<Database>;

export async function openDatabase(dataDir: string): Promise<Db> {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = new SQLite(path.join(dataDir, 'cutout.sqlite'));
  // WAL lets the CLI read and write while the server runs; the busy timeout makes writers queue
  // instead of failing when both touch the file at once.
  file.pragma('journal_mode = WAL');
  file.pragma('busy_timeout = 5000');
  file.pragma('foreign_keys = ON');
  file.pragma('synchronous = NORMAL');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: file }) });
  await migrate(db);
  return db;
}

async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}

/**
 * Runs fn in one write transaction. On SQLite it begins IMMEDIATE, taking the write lock up front,
 * so that a read-then-write (check balance, then reserve) can never be upgraded into a busy error
 * by another process holding the file.
 */
export async function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const result = await fn(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
  });
}
