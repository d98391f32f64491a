// Hot queries (every API request authenticates, every poll reads its task, every create writes
// three rows) spent as much time in Kysely building and compiling the same query as the database
// spent answering it. Such a query is compiled once per engine, with markers where its values go,
// and then run with each call's values put in the markers' places. Per engine rather than per
// handle, so that the handle a transaction runs on (a new one each time) finds it compiled.
import type { CompiledQuery } from 'kysely';
import { engineOf, type Db, type Engine } from './database.ts';
import { readNow } from './sqlite-connection.ts';

/** Stands in for the i-th value while the query is built; only a marker may become a parameter. */
const marker = (i: number): string => `\u0000compiled-once-value-${i}\u0000`;

/**
 * `build` is given a marker in place of each value, typed as the value for the query builder's
 * sake; every parameter of the query must be one of them (constants go in as SQL or as values).
 */
export function compiledOnce<Row, Values extends unknown[]>(
  build: (db: Db, ...values: Values) => { compile(): CompiledQuery<Row> },
  arity: Values['length'],
): (db: Db, ...values: Values) => Promise<Row[]> {
  const compiledFor = new Map<Engine, { query: CompiledQuery<Row>; slots: number[] }>();
  return async (db, ...values) => {
    const engine = engineOf(db);
    let entry = compiledFor.get(engine);
    if (!entry) {
      const markers = Array.from({ length: arity }, (_, i) => marker(i));
      const query = build(db, ...(markers as unknown as Values)).compile();
      const slots = query.parameters.map((p) => {
        const slot = markers.indexOf(p as string);
        if (slot < 0) throw new Error(`compiledOnce: parameter ${JSON.stringify(p)} is not one of the query's values`);
        return slot;
      });
      compiledFor.set(engine, (entry = { query, slots }));
    }
    const parameters = entry.slots.map((slot) => values[slot]);
    const now = readNow(db, entry.query.sql, parameters);
    if (now) return now as Row[];
    const { rows } = await db.executeQuery<Row>({ ...entry.query, parameters });
    return rows;
  };
}
