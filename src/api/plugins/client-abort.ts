// A client that goes away while its request body is on the way makes Node end the body stream
// with an "aborted" error, which the body parser hands to the error handler. That error, and only
// that one, is the client's doing: any other error after the client left (a database connection
// reset while the request waited on it) is still the server's and is logged as such.
import type { FastifyError, FastifyRequest } from 'fastify';

export function isClientAbort(err: FastifyError, request: FastifyRequest): boolean {
  return err === request.raw.errored;
}
