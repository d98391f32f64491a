// Migrations run on SQLite and PostgreSQL alike. The few column types the two spell differently
// are chosen here, so each migration stays one file for both engines. A migration that is already
// applied somewhere must keep producing the same SQLite schema it always did.
import { PostgresAdapter, type CreateTableBuilder, type Kysely } from 'kysely';

export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** An integer primary key the database numbers itself. */
export function autoIncrementId(db: Kysely<unknown>, name = 'id') {
  return <T extends string>(table: CreateTableBuilder<T, never>): CreateTableBuilder<T, never> =>
    isPostgres(db)
      ? table.addColumn(name, 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
      : table.addColumn(name, 'integer', (c) => c.primaryKey().autoIncrement());
}
