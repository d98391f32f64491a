// Opens the store and applies versioned migrations. SQLite is the embedded default; a
// postgres:// DATABASE_URL switches every repository to PostgreSQL through the same query layer.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, Migrator, PostgresAdapter, PostgresDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { isDatabaseOutage } from './database-outage.ts';
import { openSqliteKysely } from './sqlite-connection.ts';
import * as initial from './migrations/001-initial.ts';
import * as web from './migrations/002-web.ts';
import * as activeTasks from './migrations/003-active-tasks.ts';
import * as resultKey from './migrations/004-result-key.ts';
import * as rateWindows from './migrations/005-rate-windows.ts';
import * as emailCase from './migrations/006-email-case.ts';
import * as signUpAttempts from './migrations/007-sign-up-attempts.ts';
import * as pendingUploads from './migrations/008-pending-uploads.ts';

const migrations: Record<string, Migration> = {
  '001-initial': initial,
  '002-web': web,
  '003-active-tasks': activeTasks,
  '004-result-key': resultKey,
  '005-rate-windows': rateWindows,
  '006-email-case': emailCase,
  '007-sign-up-attempts': signUpAttempts,
  '008-pending-uploads': pendingUploads,
};

export type Db = Kysely<Database>;
/** A handle bound to one connection inside a transaction. */
export type Tx = Kysely<Database>;
export type Engine = 'sqlite' | 'postgres';

export interface StoreOptions {
  dataDir: string;
  /** postgres://… selects PostgreSQL; absent means the SQLite file in the data folder. */
  databaseUrl?: string | undefined;
  poolSize?: number;
  /** PostgreSQL only: how long one statement may take (default 30 s); migrations are not bound by it. */
  queryTimeoutMs?: number;
}

export async function openDatabase(options: StoreOptions): Promise<Db> {
  if (!options.databaseUrl) return migrated(openSqlite(options.dataDir));
  // Migrations run on a connection of their own without the statement timeout: building an index
  // on a large table may take longer than any request should, and they run once, at start.
  await migrated(openPostgres(options.databaseUrl, 1)).then((db) => db.destroy());
  return openPostgres(options.databaseUrl, options.poolSize ?? 10, options.queryTimeoutMs ?? 30_000);
}

async function migrated(db: Db): Promise<Db> {
  try {
    await migrate(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return db;
}

const busyTimeoutMs = 5000;

function openSqlite(dataDir: string): Db {
  fs.mkdirSync(dataDir, { recursive: true });
  const location = path.join(dataDir, 'cutout.sqlite');
  // The busy timeout makes writers queue instead of failing when two processes touch the file at
  // once; given here, it holds from the file's first statement on.
  let file: SQLite.Database;
  try {
    file = new SQLite(location, { timeout: busyTimeoutMs });
  } catch (err) {
    // SQLITE_CANTOPEN, which the API counts as an outage, is here a folder this user may not write
    // (SQLite creates the file, and its -wal and -shm beside it): waiting would not mend it.
    const hint = canWrite(dataDir) ? '' : `; ${dataDir} must be writable by the user that runs cutout`;
    throw new DatabaseUnavailableError(`cannot open the database ${location}: ${describeError(err)}${hint}`, { cause: err });
  }
  try {
    switchToWal(file, Date.now() + busyTimeoutMs);
    file.pragma('foreign_keys = ON');
    file.pragma('synchronous = NORMAL');
    // A group commit's savepoints (group-commit.ts) keep each create's original pages in a
    // sub-journal, which SQLite otherwise spills to a temporary file past 64 KiB: about two
    // writes to such a file per create. In memory it holds one create's pages at a time: each
    // savepoint's release empties it. The store's other temporary data are the sorts of queries
    // with a limit (retention's batches, pages of lists).
    file.pragma('temp_store = MEMORY');
  } catch (err) {
    file.close();
    // A lock or a full disk may pass; a file that is not SQLite (or is damaged) will not, and is
    // named in one line rather than shown as a stack trace.
    if (isDatabaseOutage(err)) throw err;
    throw new DatabaseUnavailableError(`cannot use the database ${location}: ${describeError(err)}`, { cause: err });
  }
  return openSqliteKysely(file);
}

function canWrite(folder: string): boolean {
  try {
    fs.accessSync(folder, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * WAL lets the CLI read and write while the server runs. Switching a file to it reads the header,
 * then writes it, and SQLite refuses that write at once, without the busy wait (a reader waiting
 * for a writer that waits for its readers to leave would never end), while another connection holds
 * the write lock: a process starting on a new file while another was switching it failed to start.
 * BEGIN IMMEDIATE, which holds nothing while it waits, waits for that lock; switching again then
 * finds the file switched by the other (nothing left to write) or takes the lock itself.
 */
function switchToWal(file: SQLite.Database, deadline: number): void {
  for (;;) {
    try {
      file.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!/^SQLITE_BUSY/.test(String((err as { code?: unknown }).code)) || Date.now() >= deadline) throw err;
    }
    file.exec('begin immediate');
    file.exec('rollback');
  }
}

// Times and counts are bigint columns; epoch milliseconds fit a double exactly, so they are read
// back as numbers rather than pg's default strings. Scoped to this pool, not pg's global parsers.
const int8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === int8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/**
 * The pool, its statements bounded by `queryTimeoutMs` when given. The server cancels a statement
 * that runs past it (a lock another process holds, an overloaded server), and the connection stays
 * usable; a connection that goes quiet (a network partition) cannot hear that, so the client gives
 * up a second later on its own and the request fails instead of waiting for TCP to give up, which
 * takes many minutes. The late answer is dropped when it comes.
 *
 * The server likewise gives up on a transaction whose next statement does not come within it: a
 * process that vanished mid-transaction (power or network lost) never closes its connection, and
 * its row locks (an account's, during a create; abandoned tasks' and their accounts', during a reap)
 * stayed until the server's TCP keepalive noticed, hours later by default. Our transactions send
 * their statements back to back, so no live one waits that long.
 */
function openPostgres(url: string, max: number, queryTimeoutMs?: number): Db {
  const timeouts =
    queryTimeoutMs === undefined
      ? {}
      : { statement_timeout: queryTimeoutMs, idle_in_transaction_session_timeout: queryTimeoutMs, query_timeout: queryTimeoutMs + 1000 };
  const pool = new pg.Pool({ connectionString: url, max, types, connectionTimeoutMillis: 10_000, ...timeouts });
  // A connection the server drops (restart, failover, pg_terminate_backend) emits an error event:
  // on the pool while idle, on the client while checked out between two queries. Unhandled, either
  // would crash the process; the next query on that client fails instead, and the pool discards
  // the dead client and opens a fresh one (test/e2e/multi-process.test.ts cuts connections).
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    if (queryTimeoutMs !== undefined) closeWhenUnanswered(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

/**
 * pg gives up on a statement at query_timeout but keeps its connection, still waiting for that
 * answer, and the pool hands it out again: each later statement on it queued behind the lost one and
 * failed a timeout later, for as long as TCP took to notice (many minutes after a failover). The
 * connection is ended instead (pg cuts a connection whose statement is still pending), and marked
 * as ending before the pool takes it back, so the pool drops it rather than handing it out once
 * more while it closes, and opens a fresh one.
 */
function closeWhenUnanswered(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise) {
      result.catch((err: unknown) => {
        if (err instanceof Error && err.message === 'Query read timeout') client.end().catch(() => {});
      });
    }
    return result;
  }) as typeof client.query;
}

const pools = new WeakMap<Db, pg.Pool>();

/**
 * The connection pool under a PostgreSQL store. The queue's three statements run on it as named
 * (server-side prepared) statements, planned once per connection: EXPLAIN ANALYZE of the claim
 * showed more time planning than executing, and `npm run bench:queue`'s overhead at 3 claimers
 * went from 4.1–5.1 ms to 3.1–3.5 ms.
 */
export function postgresPool(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('not a PostgreSQL store opened by openDatabase');
  return pool;
}

export function engineOf(db: Db): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * Safe when several processes start at once. On PostgreSQL Kysely's migrator holds a session
 * advisory lock while it checks and applies migrations, each in its own transaction (its own tables
 * are created tolerating a concurrent creator). On SQLite its lock is a no-op and a deferred
 * transaction lets two starters both see "not applied", so the whole run happens inside one
 * IMMEDIATE transaction instead, taken only when a migration is missing. test/store/task-queue.test.ts
 * starts six at once on each engine.
 */
async function migrate(db: Db): Promise<void> {
  const run = async (target: Db, disableTransactions: boolean): Promise<void> => {
    const migrator = new Migrator({ db: target, provider: { getMigrations: async () => migrations }, disableTransactions });
    const { error, results } = await migrator.migrateToLatest();
    const failed = results?.find((r) => r.status === 'Error');
    if (failed) throw new Error(`database migration ${failed.migrationName} failed: ${String(error)}`, { cause: error });
    // Nothing was migrated: the database could not be reached, or not used (authentication, a
    // missing database, a file that is not SQLite…), before any migration began.
    if (error) throw new DatabaseUnavailableError(`cannot use the database: ${describeError(error)}`, { cause: error });
  };
  if (engineOf(db) === 'postgres') return run(db, false);
  // The write lock only when the file's migrations differ from ours: a read-only command (keys
  // list) then opens a file whose lock the server holds for longer than the busy timeout. Anything
  // else (a new file, a missing migration, one from a newer version, a file that cannot be read) is
  // left to the run below, which applies or refuses it and says why.
  const executed = await sql<{ name: string }>`select name from kysely_migration`.execute(db).then(({ rows }) => rows.map((row) => row.name).sort(), () => undefined);
  if (executed?.join('\n') === Object.keys(migrations).sort().join('\n')) return;
  await inTransaction(db, (conn) => run(conn, true));
}

/** The store could not be opened: the message says why (connection refused, authentication…). */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
  readonly code = 'database_unavailable';
}

/** An error's message; a connection to a host of several addresses fails with an AggregateError whose own message is empty. */
function describeError(err: unknown): string {
  if (err instanceof AggregateError && !err.message) return err.errors.map(describeError).join('; ');
  return err instanceof Error ? err.message : String(err);
}

/** Whether the database answers; for readiness checks. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Compiled once: every transaction runs two of them (group-commit.ts too). */
export const transactionStatements = {
  begin: CompiledQuery.raw('begin'),
  beginImmediate: CompiledQuery.raw('begin immediate'),
  commit: CompiledQuery.raw('commit'),
  rollback: CompiledQuery.raw('rollback'),
};

/**
 * Runs fn in one write transaction. On SQLite it begins IMMEDIATE, taking the write lock up front,
 * so that a read-then-write (check balance, then reserve) can never be upgraded into a busy error
 * by another process holding the file. On PostgreSQL it is a READ COMMITTED transaction; the
 * repositories take the row locks they need (FOR UPDATE) and fence updates with conditions.
 */
export async function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const begin = engineOf(db) === 'postgres' ? transactionStatements.begin : transactionStatements.beginImmediate;
  return db.connection().execute(async (conn) => {
    await conn.executeQuery(begin);
    try {
      const result = await fn(conn);
      await conn.executeQuery(transactionStatements.commit);
      return result;
    } catch (err) {
      await conn.executeQuery(transactionStatements.rollback).catch(() => {});
      throw err;
    }
  });
}
