// Bearer API key → account, then the per-key rate limit. Runs before the body is parsed, so an
// unauthenticated caller learns nothing about request validation.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { retryAfterSeconds } from '../../domain/retry-after.ts';
import type { Account } from '../../store/accounts-repository.ts';
import { authenticateApiKey } from '../../store/api-keys-repository.ts';
import type { Db } from '../../store/database.ts';
import type { RateLimit } from '../rate-limiter.ts';
import { bearerToken } from '../bearer-token.ts';

declare module 'fastify' {
  interface FastifyRequest {
    account?: Account;
  }
}

// RFC 9110 §15.5.2: a 401 must name the scheme that would be accepted. RFC 6750 §3.1: a bearer key
// that was sent and refused (malformed, unknown, deleted) is an invalid_token; a request with no
// bearer key at all gets the bare challenge.
const challenge = 'Bearer realm="api"';

function unauthorized(message: string, bearerKeySent: boolean): ApiError {
  return new ApiError('invalid_api_key', message, { 'WWW-Authenticate': bearerKeySent ? `${challenge}, error="invalid_token"` : challenge });
}

export function requireAccount(request: FastifyRequest): Account {
  if (!request.account) throw unauthorized('Missing API key.', false);
  return request.account;
}

export function authenticate(db: Db, limiter: RateLimit) {
  return async function authenticateHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (!header) throw unauthorized('Missing API key: send the header "Authorization: Bearer <API_KEY>".', false);
    const key = bearerToken(header);
    if (!key) {
      throw unauthorized('Malformed Authorization header: expected "Bearer <API_KEY>".', /^Bearer(\s|$)/i.test(header.trim()));
    }
    const found = await authenticateApiKey(db, key);
    if (!found) throw unauthorized('Invalid API key: it is unknown or was deleted.', true);

    const decision = await limiter.hit(found.keyId);
    const resetSeconds = retryAfterSeconds(decision.resetAt, Date.now());
    reply.header('X-RateLimit-Limit', String(decision.limit));
    reply.header('X-RateLimit-Remaining', String(decision.remaining));
    reply.header('X-RateLimit-Reset', String(Math.ceil(decision.resetAt / 1000)));
    if (!decision.allowed) {
      throw new ApiError('rate_limit_exceeded', `Rate limit of ${decision.limit} requests per minute for this API key exceeded.`, {
        'Retry-After': String(resetSeconds),
      });
    }
    if (!found.account.apiAccess) {
      throw new ApiError('api_access_required', 'API access requires a paid plan or a credit purchase.');
    }
    request.account = found.account;
  };
}
