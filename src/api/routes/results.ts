import { Readable } from 'node:stream';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../../domain/errors.ts';
import { errorResponses } from '../schemas.ts';
import type { FastifyReply } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { ApiContext } from '../context.ts';
import type { StoredResult } from '../../storage/disk-result-store.ts';
import { answerFor, entityTag } from '../result-response.ts';
import { contentTypeOf } from '../../storage/result-store.ts';
import { combinedLines } from '../single-header.ts';

const signedParameter = z.string().optional().catch(undefined);

export const invalidResultUrlMessage = 'The result URL signature is missing or does not match.';

export function resultRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/results/:key',
      {
        schema: {
          operationId: 'downloadResult',
          summary: 'Download a result (signed URL)',
          description:
            'The `output.url` of a succeeded task. It needs no Authorization header: the URL itself carries an expiry and an HMAC ' +
            'signature. A changed URL gets 403 `result_url_invalid`, an expired one 410 `result_url_expired` (GET the task for a fresh URL), ' +
            'and a result deleted after the retention period 404 `result_not_found`. Downloads can resume and revalidate: the answer carries ' +
            '`ETag`, `Last-Modified` and `Accept-Ranges: bytes`; one byte range (`Range: bytes=…`, honoured under a matching `If-Range`) ' +
            'gets 206 with `Content-Range`, a range that starts past the end 416 `range_not_satisfiable` with `Content-Range: bytes */<size>`, ' +
            'and several ranges or a malformed header the whole file; a matching `If-None-Match` or `If-Modified-Since` gets 304. ' +
            'An `If-Match` naming no current tag (compared strongly), or without it an `If-Unmodified-Since` before `Last-Modified`, ' +
            'gets 412 `precondition_failed` before any other condition or range is looked at.',
          params: z.object({ key: z.string() }),
          // A parameter given twice is not the URL we signed: it reads as missing, so the answer is
          // 403 result_url_invalid like any other changed URL, not a validation error.
          querystring: z.object({ expires: signedParameter, signature: signedParameter }),
          response: {
            200: {
              description: 'The cutout, in the `output.format` of the task.',
              content: {
                'image/png': { schema: z.unknown().describe('PNG with an alpha channel (RGBA).') },
                'image/webp': { schema: z.unknown().describe('Lossless WebP with an alpha channel.') },
              },
            },
            206: {
              description: 'The byte range asked for by `Range`, with `Content-Range`.',
              content: {
                'image/png': { schema: z.unknown().describe('Part of the PNG.') },
                'image/webp': { schema: z.unknown().describe('Part of the WebP.') },
              },
            },
            304: z.null().describe('The copy the client holds (`If-None-Match` / `If-Modified-Since`) is current; no body, and no `Content-Type` or `Content-Length`.'),
            ...errorResponses(['result_url_invalid', 'result_url_expired', 'result_not_found', 'precondition_failed', 'range_not_satisfiable']),
          },
        },
      },
      async (request, reply) => {
        const { key } = request.params;
        const check = ctx.signer.verify(key, request.query.expires, request.query.signature);
        if (check === 'invalid') throw new ApiError('result_url_invalid', invalidResultUrlMessage);
        if (check === 'expired') throw new ApiError('result_url_expired', 'The result URL has expired; GET the task again for a fresh URL.');
        const file = await ctx.downloads?.open(key);
        if (!file) throw new ApiError('result_not_found', 'The result no longer exists; results are deleted after the retention period.');
        let answer: Readable | 'empty' | 'not-modified' | undefined;
        try {
          answer = answerWith(reply, request.method, conditionHeaders(request.headers, request.raw.rawHeaders), key, file, Number(request.query.expires));
        } finally {
          // A stream closes the file when it ends; every other answer (and a throw) closes it here.
          if (!(answer instanceof Readable)) await file.close();
        }
        // A 304 has no content (RFC 9110 §15.4.5). An empty stream, not undefined: Fastify adds neither
        // Content-Type nor Content-Length to it, where its automatic HEAD route would add
        // Content-Length: 0 to an undefined payload, which §8.6 forbids (the file is not empty).
        if (answer === 'not-modified') return reply.send(Readable.from([]));
        // A download whose client stops reading (a laptop closed mid-download, a script that never
        // reads) would hold its connection and open file for good: Node gives sockets no idle timeout.
        // While the file streams, a socket on which nothing has moved for the request timeout is
        // destroyed (Node's default when nobody listens for the timeout); a slow reader still moves.
        // Once the response has finished, Node replaces it with the keep-alive timeout.
        if (answer instanceof Readable) request.raw.socket.setTimeout(ctx.config.requestTimeoutMs);
        return reply.send(answer === 'empty' ? Readable.from([]) : answer);
      },
    );
  };
}

/**
 * The request's headers with each date condition as all of its lines: Node keeps only the first line
 * of If-Modified-Since and If-Unmodified-Since, where two lines are a list of dates, which RFC 9110
 * §13.1.3 and §13.1.4 have a recipient ignore (the parse of one HTTP-date refuses the list).
 */
function conditionHeaders(headers: IncomingHttpHeaders, rawHeaders: string[]): IncomingHttpHeaders {
  return {
    ...headers,
    'if-modified-since': combinedLines(rawHeaders, 'if-modified-since'),
    'if-unmodified-since': combinedLines(rawHeaders, 'if-unmodified-since'),
  };
}

/**
 * Sets the download's status and headers and returns the stream of its bytes, or what the answer
 * is instead: a HEAD or an empty file has an empty body, a 304 none.
 */
function answerWith(
  reply: FastifyReply,
  method: string,
  headers: IncomingHttpHeaders,
  key: string,
  file: StoredResult,
  expires: number,
): Readable | 'empty' | 'not-modified' {
  const tag = entityTag(file);
  const answer = answerFor(method, headers, { size: file.size, tag, modified: file.modified });
  if (answer.kind === 'precondition-failed') {
    throw new ApiError('precondition_failed', 'The result is not the version that If-Match or If-Unmodified-Since names; download it again without them.');
  }
  if (answer.kind === 'unsatisfiable') {
    throw new ApiError('range_not_satisfiable', `The requested range is outside the result's ${file.size} bytes.`, { 'Content-Range': `bytes */${file.size}` });
  }
  const secondsLeft = Math.max(0, expires - Math.floor(Date.now() / 1000));
  reply
    .header('ETag', tag)
    .header('Last-Modified', file.modified.toUTCString())
    .header('Cache-Control', `private, max-age=${secondsLeft}`)
    .header('Accept-Ranges', 'bytes');
  if (answer.kind === 'not-modified') {
    reply.code(304);
    return 'not-modified';
  }
  reply.header('Content-Type', contentTypeOf(key)).header('Content-Disposition', `inline; filename="${key}"`);
  const range = answer.kind === 'part' ? answer : { start: 0, end: file.size - 1 };
  if (answer.kind === 'part') reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`);
  reply.header('Content-Length', String(range.end - range.start + 1));
  return method === 'HEAD' || file.size === 0 ? 'empty' : file.read(range);
}
