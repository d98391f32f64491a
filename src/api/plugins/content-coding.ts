// A request body's Content-Encoding. Without this hook Fastify ignores the header and hands the
// compressed bytes to the body parser, which refused them as not UTF-8 or not JSON: a misleading
// answer for a client that compresses its bodies, as some do. A scope either decodes the codings
// it names (decoded-body.ts) or refuses the body with 415 and an Accept-Encoding that says what it
// takes (RFC 9110 §15.5.16). One coding at most: "gzip, br" (a body compressed twice) is refused,
// as no client sends it and the limit on the decoded body would not bound the inner decoder's work
// (an outer layer can inflate to any amount of empty deflate blocks that decode to nothing).
import type { IncomingHttpHeaders } from 'node:http';
import type { preParsingHookHandler } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { DecodedBody, type Coding } from './decoded-body.ts';

/** The codings the API decodes, in the order its Accept-Encoding names them. */
export const apiCodings: readonly Coding[] = ['gzip', 'x-gzip', 'deflate', 'br'];

/** The codings named, lower case, without identity (which changes nothing, RFC 9110 §12.5.3). */
function codingsOf(header: string): string[] {
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** As Fastify tells a request with a body from one without (handle-request.js). */
function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

function unsupported(header: string, accepted: readonly Coding[]): ApiError {
  const instead = accepted.length === 0 ? 'send it uncompressed' : `send it uncompressed, or in one of ${accepted.join(', ')} (one coding, not several)`;
  return new ApiError(
    'invalid_request',
    `The request body's Content-Encoding ${JSON.stringify(header)} is not supported: ${instead}.`,
    { 'Accept-Encoding': accepted.length === 0 ? 'identity' : accepted.join(', ') },
    415,
  );
}

/** A preParsing hook: the body decoded where its coding is one of `accepted`, refused with 415 otherwise. */
export function contentCodings(accepted: readonly Coding[]): preParsingHookHandler {
  return (request, _reply, payload, done) => {
    // Every API request passes here, polls included: most carry no coding and no body.
    const header = request.headers['content-encoding'];
    if (header === undefined || !hasBody(request.headers)) return done(null, payload);
    const codings = codingsOf(header);
    if (codings.length === 0) return done(null, payload);
    const coding = codings.length === 1 ? accepted.find((name) => name === codings[0]) : undefined;
    if (coding === undefined) return done(unsupported(header, accepted));
    done(null, new DecodedBody(payload, coding, request.routeOptions.bodyLimit));
  };
}
