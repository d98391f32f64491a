// A client that goes away while its request body is on the way makes Node end the body stream
// with an "aborted" error, which the body parser hands to the error handler. That error, and only
// that one, is the client's doing: any other error after the client left (a database connection
// reset while the request waited on it) is still the server's and is logged as such. So is a body
// that arrived too slowly, which Node cut at the request timeout: client-errors.ts has then already
// answered 408 and logged it under the request's id.
import type { IncomingMessage } from 'node:http';
import type { FastifyError, FastifyRequest } from 'fastify';

const timedOut = new WeakSet<IncomingMessage>();

/** What a request cut at the request timeout is told, and logged as. */
export const timedOutMessage = 'The request was not received in time.';

/** For client-errors.ts: Node is cutting this request for not arriving within the request timeout. */
export function markTimedOut(raw: IncomingMessage): void {
  timedOut.add(raw);
}

/** Why the request's body never arrived when it is the client's doing: it closed the connection, or was too slow. */
export function clientAbort(err: FastifyError, request: FastifyRequest): 'closed' | 'timed_out' | undefined {
  if (err !== request.raw.errored) return undefined;
  return timedOut.has(request.raw) ? 'timed_out' : 'closed';
}
