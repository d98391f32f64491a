// Every failure leaves as the spec's Error body with a stable code and the request id.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ApiError, apiErrors, type ApiErrorCode } from '../../domain/errors.ts';
import { databaseOutageMessage, databaseOutageRetrySeconds, outageOf, storageOutageMessage } from '../../store/database-outage.ts';
import { clientAbort, timedOutMessage } from './client-abort.ts';
import { describeValidationFailure } from './validation-message.ts';

export function errorBody(code: ApiErrorCode, message: string, requestId: string) {
  return { error: { code, message, request_id: requestId } };
}

// Headers a download sets before its file is read: an error that follows must not describe its
// JSON body as the image (nor let a cache keep it as one). A stream's headers are already on the
// raw response, waiting for its first bytes, so they are removed there too.
const headersOfTheFile = ['Content-Type', 'Content-Length', 'Content-Disposition', 'Content-Range', 'Accept-Ranges', 'ETag', 'Last-Modified', 'Cache-Control'];

export function sendError(reply: FastifyReply, request: FastifyRequest, code: ApiErrorCode, message: string, headers: Record<string, string> = {}, status: number = apiErrors[code].status) {
  for (const name of headersOfTheFile) {
    reply.removeHeader(name);
    if (!reply.raw.headersSent) reply.raw.removeHeader(name);
  }
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.code(status).send(errorBody(code, message, request.id));
}

/** An expected refusal: logged at info with its code, answered with the Error body. */
export function sendApiError(reply: FastifyReply, request: FastifyRequest, apiError: ApiError) {
  request.log.info({ code: apiError.code, status: apiError.status }, apiError.message);
  return sendError(reply, request, apiError.code, apiError.message, apiError.headers, apiError.status);
}

function translateFrameworkError(err: FastifyError, request: FastifyRequest): ApiError | undefined {
  if (hasZodFastifySchemaValidationErrors(err)) {
    return new ApiError('invalid_request', describeValidationFailure(err.validation));
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const type = request.headers['content-type'] ?? '';
      if (/^multipart\//i.test(type)) {
        return new ApiError('invalid_request', 'File upload is not available in this version of the API: send a JSON body with image_url.');
      }
      return new ApiError('invalid_request', `Content-Type must be application/json (got ${type ? JSON.stringify(type) : 'none'}).`);
    }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'The request body is empty: send a JSON object with image_url.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', `Malformed JSON body: ${err.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('invalid_request', 'The request body is too large.');
  }
  // Nobody is left to answer, and it is no fault of the server's: logged as a refusal.
  if (clientAbort(err, request) === 'closed') {
    return new ApiError('invalid_request', 'The client closed the connection before the request body arrived.');
  }
  if (err.statusCode === 400 && err instanceof SyntaxError) {
    return new ApiError('invalid_request', `Malformed JSON body: ${err.message}`);
  }
  return undefined;
}

/** The answer to whatever a route or hook threw; router-refusals.ts answers through it too. */
export function answerError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // Answered 408 and logged on the socket already (client-errors.ts), which is closed now.
  if (clientAbort(err, request) === 'timed_out') return reply.code(408).send(errorBody('invalid_request', timedOutMessage, request.id));
  const apiError = err instanceof ApiError ? err : translateFrameworkError(err, request);
  if (apiError) return sendApiError(reply, request, apiError);
  const outage = outageOf(err);
  if (outage) {
    request.log.error({ err }, `${outage} unavailable`);
    const message = outage === 'database' ? databaseOutageMessage : storageOutageMessage;
    return sendError(reply, request, 'service_unavailable', message, { 'Retry-After': String(databaseOutageRetrySeconds) });
  }
  request.log.error({ err }, 'unhandled error');
  return sendError(reply, request, 'internal_error', 'An unexpected error occurred; quote the request id when reporting it.');
}

/** Another answer to an unknown address, for the clients it takes (the web app's page for browsers). */
export interface NotFoundPage {
  takes(request: FastifyRequest): boolean;
  send(request: FastifyRequest, reply: FastifyReply): FastifyReply;
}

// The API's own paths answer with the Error body whatever the client accepts.
const apiPath = /^\/api(\/|$)/;

export function registerErrorHandling(app: FastifyInstance, page: NotFoundPage): void {
  app.setErrorHandler(answerError);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (apiPath.test(path)) return sendError(reply, request, 'not_found', `No route ${request.method} ${path}.`);
    // Outside the API the answer depends on Accept: a cache must not hand one client's to another.
    reply.header('Vary', 'Accept');
    if (page.takes(request)) return page.send(request, reply);
    return sendError(reply, request, 'not_found', `No route ${request.method} ${path}.`);
  });
}
