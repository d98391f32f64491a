// Hot reads (every API request authenticates, every poll reads its task) spent as much time in
// Kysely building and compiling the same query as the database spent answering it. Such a query is
// compiled once per database handle, with markers where its values go, and then run with each
// call's values put in the markers' places.
import type { CompiledQuery } from 'kysely';
import type { Db } from './database.ts';

/** Stands in for the i-th value while the query is built; only a marker may become a parameter. */
const marker = (i: number): string => `\u0000compiled-once-value-${i}\u0000`;

export function compiledOnce<Row, Values extends unknown[]>(
  build: (db: Db, ...values: { [K in keyof Values]: string }) => { compile(): CompiledQuery<Row> },
  arity: Values['length'],
): (db: Db, ...values: Values) => Promise<Row[]> {
  const compiledFor = new WeakMap<Db, { query: CompiledQuery<Row>; slots: number[] }>();
  return async (db, ...values) => {
    let entry = compiledFor.get(db);
    if (!entry) {
      const markers = Array.from({ length: arity }, (_, i) => marker(i)) as { [K in keyof Values]: string };
      const query = build(db, ...markers).compile();
      const slots = query.parameters.map((p) => {
        const slot = markers.indexOf(p as string);
        if (slot < 0) throw new Error(`compiledOnce: parameter ${JSON.stringify(p)} is not one of the query's values`);
        return slot;
      });
      compiledFor.set(db, (entry = { query, slots }));
    }
    const { rows } = await db.executeQuery<Row>({ ...entry.query, parameters: entry.slots.map((slot) => values[slot]) });
    return rows;
  };
}
