// The query layer over the one better-sqlite3 connection of a SQLite store: its statements kept
// once prepared, and the hot reads answered at once while no one holds or awaits the connection.
import type SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, SqliteDriver, type DatabaseConnection, type SqliteDatabase, type SqliteStatement } from 'kysely';
import type { Database } from './schema.ts';

/**
 * A read answered by the statement now, or undefined when the connection is held or awaited: a
 * transaction may be open on it, and a read run there would see that transaction's writes before
 * they commit, or writes that it then rolls back.
 */
type ReadNow = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

const readers = new WeakMap<Kysely<Database>, ReadNow>();

/**
 * Kysely runs every query through its connection lock (a mutex and several promises), which a poll
 * paid for twice (the key, the task): about 5 µs of its 105 on Zen 4 (a throwaway script polling
 * bench:api's server, five runs in turn with the code before; README, "Measured on Zen 4 at stop
 * 43"). better-sqlite3 answers synchronously, so a read that finds the connection free is run here
 * instead, from the same prepared statement, and returns the same rows.
 * Only for a SQLite store's own handle: a transaction's handle, or a PostgreSQL store's, is not registered.
 */
export function readNow(db: Kysely<Database>, sql: string, parameters: readonly unknown[]): unknown[] | undefined {
  return readers.get(db)?.(sql, parameters);
}

/**
 * Kysely's driver, counting the callers that hold the connection or wait for it, from the moment
 * one asks (synchronously, as a transaction starts) to its release: a read then finds it free only
 * when it would have been answered first through the queue too, so reads and writes keep the order
 * in which they were issued.
 */
class CountedConnectionDriver extends SqliteDriver {
  claims = 0;

  override acquireConnection(): Promise<DatabaseConnection> {
    this.claims++;
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    this.claims--;
    await super.releaseConnection();
  }
}

export function openSqliteKysely(file: SQLite.Database): Kysely<Database> {
  const statements = withStatementCache(file);
  const driver = new CountedConnectionDriver({ database: statements });
  const dialect = new (class extends SqliteDialect {
    override createDriver(): SqliteDriver {
      return driver;
    }
  })({ database: statements });
  const db = new Kysely<Database>({ dialect });
  readers.set(db, (sql, parameters) => {
    if (driver.claims > 0 || !file.open) return undefined;
    const statement = statements.prepare(sql);
    return statement.reader ? (statement.all(parameters) as unknown[]) : undefined;
  });
  return db;
}

/**
 * Kysely prepares every query it runs; parsing the SQL again was the largest single cost of a poll
 * (`npm run bench:api` profile). The statements are kept by their text instead, the oldest dropped
 * past a bound because a few queries (IN lists) vary in shape. Reuse is safe: the driver runs one
 * statement at a time to completion (all/run), never two iterations of one statement at once, and
 * readNow runs only while no one holds or awaits the connection.
 */
function withStatementCache(file: SQLite.Database, limit = 256): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => void file.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = withRowsBuiltHere(file.prepare(text));
        if (statements.size >= limit) statements.delete(statements.keys().next().value!);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

/**
 * A query's rows as plain objects built here from better-sqlite3's arrays. Its own row objects are
 * made property by property through V8's API, looking every column name up in the string table
 * again for every row, and a poll reads two rows of 20-odd columns (a CPU profile of the server
 * under bench:api's polls put better-sqlite3's reads at about a fifth of its time). Same objects:
 * column names as keys, a later duplicate name winning.
 */
function withRowsBuiltHere(statement: SQLite.Statement): SqliteStatement {
  if (!statement.reader) return statement;
  const names = statement.columns().map((column) => column.name);
  const rows = statement.raw(true);
  const toObject = (values: unknown[]): Record<string, unknown> => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    return row;
  };
  return {
    reader: true,
    all: (parameters) => (rows.all(...parameters) as unknown[][]).map(toObject),
    run: (parameters) => rows.run(...parameters),
    *iterate(parameters) {
      for (const values of rows.iterate(...parameters) as IterableIterator<unknown[]>) yield toObject(values);
    },
  };
}
