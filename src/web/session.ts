// The session cookie: a random token naming a row in web_sessions. httpOnly (no script reads it),
// SameSite=Lax (not sent on cross-site form posts), an expiry, and Secure whenever the request
// came over https or the public URL is https. On plain http (localhost) a Secure cookie would
// not come back, so it is sent without the flag there.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Account } from '../store/accounts-repository.ts';
import type { Db } from '../store/database.ts';
import { createSession, deleteSession, findSessionAccount } from '../store/web-sessions-repository.ts';

export const sessionCookie = 'cutout_session';

declare module 'fastify' {
  interface FastifyRequest {
    webAccount?: Account;
  }
}

export function cookieSecurity(config: Config): { secure: boolean | 'auto'; httpOnly: true; sameSite: 'lax'; path: '/' } {
  return { secure: config.publicUrl?.startsWith('https:') ? true : 'auto', httpOnly: true, sameSite: 'lax', path: '/' };
}

export async function startSession(db: Db, config: Config, reply: FastifyReply, accountId: string): Promise<void> {
  const session = await createSession(db, accountId, config.web.sessionTtlMs);
  reply.setCookie(sessionCookie, session.token, {
    ...cookieSecurity(config),
    expires: new Date(session.expiresAt),
    maxAge: Math.floor(config.web.sessionTtlMs / 1000),
  });
}

export async function endSession(db: Db, config: Config, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const token = request.cookies[sessionCookie];
  if (token) await deleteSession(db, token);
  reply.clearCookie(sessionCookie, cookieSecurity(config));
}

/** Reads the session cookie; an unknown or expired one is cleared. */
export function loadSession(db: Db, config: Config) {
  return async function loadSessionHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const token = request.cookies[sessionCookie];
    if (!token) return;
    const account = await findSessionAccount(db, token);
    if (account) request.webAccount = account;
    else reply.clearCookie(sessionCookie, cookieSecurity(config));
  };
}

/** Signed-in pages send visitors without a session to the sign-in page, and back afterwards. */
export async function requireSignIn(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.webAccount) return;
  if (request.method === 'GET' && !request.url.endsWith('/status')) {
    return reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`, 303);
  }
  return reply.code(401).type('application/json').send({ error: { code: 'signed_out', message: 'Your session has ended; sign in again.' } });
}

export function signedInAccount(request: FastifyRequest): Account {
  if (!request.webAccount) throw new Error('route needs requireSignIn');
  return request.webAccount;
}
