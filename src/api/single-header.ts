// Node joins the lines of a header sent more than once with ", ", as RFC 9110 §5.3 allows only for
// a field whose value is a list. A header that holds one value (Idempotency-Key) would then be read
// as a value the client never sent, so such a header is refused when repeated. For some such fields
// (If-Modified-Since, If-Unmodified-Since) Node instead keeps the first line and drops the others.
// rawHeaders keeps the lines apart: names and values alternate, the names as the client wrote them.
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';

/** The values of every line of the header `name` (lower case), in the order sent. */
function linesOf(rawHeaders: string[], name: string): string[] {
  const lines: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === name) lines.push(rawHeaders[i + 1] ?? '');
  return lines;
}

/** The header `name` (lower case) as RFC 9110 §5.3 combines its lines, whether or not Node dropped some; undefined when not sent. */
export function combinedLines(rawHeaders: string[], name: string): string | undefined {
  const lines = linesOf(rawHeaders, name);
  return lines.length === 0 ? undefined : lines.join(', ');
}

/** A hook refusing, with 400 invalid_request naming it, a request that sends the header (`Idempotency-Key`) more than once. */
export function refuseRepeated(header: string) {
  const name = header.toLowerCase();
  return async function refuseRepeatedHeader(request: FastifyRequest): Promise<void> {
    const lines = linesOf(request.raw.rawHeaders, name).length;
    if (lines > 1) throw new ApiError('invalid_request', `${header} must be sent once; this request sent it ${lines} times.`);
  };
}
