// Whether a store error means the database is out of reach or cannot take work just now (a
// restart, a failover, a dropped connection, a full disk, another process holding SQLite's write
// lock past the busy timeout), as opposed to a fault in the request or in our code. Such a request
// may succeed if sent again shortly, which is what its answer tells the client.
import { StoreUnavailableError } from '../domain/errors.ts';

/**
 * PostgreSQL's SQLSTATE classes and codes for a server that cannot serve the connection now; 57014, a
 * statement cancelled at the statement timeout (a lock held elsewhere, an overloaded server); and
 * 25006, a write refused by a server that became a standby (a connection kept across a failover).
 */
const postgresOutage = /^(08|53|57P0[1-3]|57014|25006)/;

/** What node-postgres and its pool throw, without a code, when the connection ends or cannot be had. */
const postgresClientOutage = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout)/;

/** A socket to the database that could not be made or was lost. */
const socketOutage = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** SQLite: the file locked by another process past the busy timeout, or the disk refusing it. */
const sqliteOutage = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)/;

/**
 * How long a client is asked to wait: about what a restart or a failover takes to start answering
 * again, and the poll interval the specification recommends.
 */
export const databaseOutageRetrySeconds = 5;

export const databaseOutageMessage = `The service's database cannot be reached or is busy just now; send the request again in ${databaseOutageRetrySeconds} seconds (with the same Idempotency-Key when creating a task, so that a create that did go through is not made twice).`;

/** For a request that needed the result store (the bucket) and could not have it. */
export const storageOutageMessage = `The service's storage cannot be reached just now; send the request again in ${databaseOutageRetrySeconds} seconds.`;

export function isDatabaseOutage(err: unknown): boolean {
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.every(isDatabaseOutage);
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (socketOutage.has(code) || sqliteOutage.test(code)) return true;
    // PostgreSQL's codes are five characters; Node's and SQLite's are longer words.
    if (code.length === 5 && postgresOutage.test(code)) return true;
  }
  return postgresClientOutage.test(err.message);
}

/**
 * The store a request could not have just now, which its answer (503 with Retry-After, on the API
 * and on the pages alike) names: the database, the storage (a bucket, or its credentials), or none.
 */
export function outageOf(err: unknown): 'database' | 'storage' | undefined {
  if (isDatabaseOutage(err)) return 'database';
  if (err instanceof StoreUnavailableError) return 'storage';
  return undefined;
}
