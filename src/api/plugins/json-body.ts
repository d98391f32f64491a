// The JSON body parser, Fastify's own but for two things. A "__proto__" key (or a "constructor"
// holding "prototype") is an ordinary key: Fastify refused it as "not valid JSON", though it is
// valid JSON; it is a key the route does not take, which its strict schema refuses and names like
// any other unknown field. JSON.parse never sets a prototype (it makes "__proto__" an own key); only
// code copying a body's keys one by one could, and a body reaches the routes through a schema that
// keeps only the keys it names (z.strictObject or z.object, never z.looseObject). And bytes that are
// not UTF-8 are refused (below).
import { errorCodes, type FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';

// JSON is UTF-8 (RFC 8259), whatever a charset parameter says. Decoding leniently would turn each
// stray byte into U+FFFD, so a task would be stored with an image_url other than the one sent (and
// Fastify then took the body's longer decoded length for a wrong Content-Length). A leading byte
// order mark is dropped, as RFC 8259 allows.
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseJsonBody(_request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void): void {
  if (body.length === 0) return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY());
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return done(new ApiError('invalid_request', 'The request body is not valid UTF-8: a JSON body is read as UTF-8, whatever a charset parameter says.'));
  }
  try {
    done(null, JSON.parse(text));
  } catch {
    done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY());
  }
}
