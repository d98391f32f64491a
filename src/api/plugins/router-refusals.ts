// Requests the router refuses before any route or hook runs: a path whose percent-encoding does not
// decode to UTF-8 (FST_ERR_BAD_URL), or a path parameter longer than the router's limit of 100
// characters, far above any id (FST_ERR_MAX_PARAM_LENGTH). Such a path cannot name a task or a
// result, so it is answered as a name that does not exist, in the order the real route checks:
// - a task id after the API key, rate limit and API access checks, then 404 task_not_found (the
//   statuses the specification lists for GET; a client sees what any unknown id gets);
// - a result URL as a changed one, 403 result_url_invalid (no URL we signed looks like this);
// - any other path with broken encoding as a malformed request, 400 invalid_request, and any other
//   over-long parameter as no such route, 404 not_found.
// The router's third refusal, a failed asynchronous route constraint, cannot happen here (there are
// none) and would be answered as an internal error.
import type { FastifyError, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { malformedTaskIdMessage } from '../routes/removals.ts';
import { invalidResultUrlMessage } from '../routes/results.ts';
import { answerError, sendApiError } from './error-handler.ts';

const taskPath = /^\/api\/v1\/bg\/removals\/[^/]+$/;
const resultPath = /^\/api\/v1\/results\/[^/]+$/;

async function refusal(err: FastifyError, request: FastifyRequest, reply: FastifyReply, authenticate: onRequestAsyncHookHandler): Promise<ApiError> {
  const path = request.url.split('?')[0] ?? '';
  const reads = request.method === 'GET' || request.method === 'HEAD';
  if (reads && taskPath.test(path)) {
    await authenticate.call(request.server, request, reply);
    return new ApiError('task_not_found', malformedTaskIdMessage);
  }
  if (reads && resultPath.test(path)) return new ApiError('result_url_invalid', invalidResultUrlMessage);
  if (err.code === 'FST_ERR_BAD_URL') return new ApiError('invalid_request', 'The request path is not valid percent-encoded UTF-8.');
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return new ApiError('not_found', `No route ${request.method} ${path}.`);
  throw err;
}

/** Fastify's frameworkErrors option. */
export function answerRouterRefusal(authenticate: onRequestAsyncHookHandler) {
  return async (err: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    // The onRequest hook that sets this header does not run for a request no route took.
    reply.header('X-Request-Id', request.id);
    try {
      sendApiError(reply, request, await refusal(err, request, reply, authenticate));
    } catch (thrown) {
      // Fastify does not wait for this handler, so nothing above would catch a rejection. What the
      // API key check throws gets the answer it gets on a route: its refusals, and 503 for a
      // database outage.
      answerError(thrown as FastifyError, request, reply);
    }
  };
}
