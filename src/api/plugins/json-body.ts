// The JSON body parser: Fastify's own, less its refusal of a "__proto__" key (or a "constructor"
// holding "prototype"). That refusal said "not valid JSON", which the body is; the key is one a
// route does not take, which its strict schema refuses and names like any other unknown field.
// JSON.parse never sets a prototype (it makes "__proto__" an own key); only code copying a body's
// keys one by one could, and a body reaches the routes through a schema that keeps only the keys it
// names (z.strictObject or z.object, never z.looseObject).
import { errorCodes, type FastifyRequest } from 'fastify';

export function parseJsonBody(_request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void): void {
  if (body.length === 0) return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY());
  try {
    // A byte order mark is no part of the JSON text (RFC 8259 lets a parser ignore it, as Fastify's did).
    done(null, JSON.parse(body.startsWith('\uFEFF') ? body.slice(1) : body));
  } catch {
    done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY());
  }
}
