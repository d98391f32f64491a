// The session cookie: a random token naming a row in web_sessions. httpOnly (no script reads it),
// SameSite=Lax (not sent on cross-site form posts), an expiry, and Secure, named
// __Host-cutout_session, whenever the request came over https or the public URL is https. On plain
// http (localhost) a Secure cookie would not come back, so it is sent as cutout_session without
// the flag there.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Account } from '../store/accounts-repository.ts';
import type { Db } from '../store/database.ts';
import { createSession, deleteSession, findSessionAccount } from '../store/web-sessions-repository.ts';

const sessionCookie = 'cutout_session';
/** The secret of the form tokens (@fastify/csrf-protection's cookie). */
export const formSecretCookie = '_csrf';

declare module 'fastify' {
  interface FastifyRequest {
    webAccount?: Account;
  }
}

export function cookieSecurity(config: Config): { secure: boolean | 'auto'; httpOnly: true; sameSite: 'lax'; path: '/' } {
  // Parsed, not compared as text: the configuration accepts HTTPS:// as well, and a URL's scheme has no case.
  const httpsPublicUrl = config.publicUrl !== undefined && new URL(config.publicUrl).protocol === 'https:';
  return { secure: httpsPublicUrl ? true : 'auto', httpOnly: true, sameSite: 'lax', path: '/' };
}

/** Whether the cookies of this request's answer are Secure: what @fastify/cookie makes of 'auto'. */
export function cookiesSecure(config: Config, request: FastifyRequest): boolean {
  return cookieSecurity(config).secure === true || request.protocol === 'https';
}

/**
 * A Secure cookie is named with the __Host- prefix, which browsers accept only from a secure page,
 * with Secure, Path=/ and no Domain: another host of the domain cannot set it for this one (a
 * Domain cookie fixing the session or planting a form secret it knows), nor can someone answering
 * for this host on plain http. The plain name is never read where the prefixed one is due, or
 * such a planted cookie would count after all; plain http keeps the plain names, as __Host- needs Secure.
 */
export function cookieName(config: Config, request: FastifyRequest, name: string): string {
  return cookiesSecure(config, request) ? hostOnly(name) : name;
}

export const hostOnly = (name: string): string => `__Host-${name}`;

/**
 * Starts a session for the account whose password was checked against `passwordHash`; false, and
 * no session, when that password was replaced meanwhile (see createSession).
 */
export async function startSession(
  db: Db,
  config: Config,
  reply: FastifyReply,
  credentials: { accountId: string; passwordHash: string },
): Promise<boolean> {
  const session = await createSession(db, credentials, config.web.sessionTtlMs);
  if (!session) return false;
  reply.setCookie(cookieName(config, reply.request, sessionCookie), session.token, {
    ...cookieSecurity(config),
    expires: new Date(session.expiresAt),
    maxAge: Math.floor(config.web.sessionTtlMs / 1000),
  });
  forgetFormSecret(config, reply);
  return true;
}

export async function endSession(db: Db, config: Config, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const name = cookieName(config, request, sessionCookie);
  const token = request.cookies[name];
  if (token) await deleteSession(db, token);
  reply.clearCookie(name, cookieSecurity(config));
  forgetFormSecret(config, reply);
}

/**
 * The form secret outlives no session: a token handed out before a sign-in (perhaps planted by
 * someone who set or read this browser's secret) or before a sign-out (read at a shared computer)
 * would otherwise pass the CSRF check in the next session. The next page makes a new secret.
 */
function forgetFormSecret(config: Config, reply: FastifyReply): void {
  reply.clearCookie(cookieName(config, reply.request, formSecretCookie), cookieSecurity(config));
}

/** Reads the session cookie; an unknown or expired one is cleared. */
export function loadSession(db: Db, config: Config) {
  return async function loadSessionHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const name = cookieName(config, request, sessionCookie);
    const token = request.cookies[name];
    if (!token) return;
    const account = await findSessionAccount(db, token);
    if (account) request.webAccount = account;
    else reply.clearCookie(name, cookieSecurity(config));
  };
}

/** The task page's status endpoint, polled by web.js, which handles a JSON 401 itself. */
export const taskStatusRoute = '/app/tasks/:id/status';

/**
 * Signed-in pages send visitors without a session (never signed in, expired, or signed out in
 * another tab) to the sign-in page, and back afterwards: to the page asked for, or, for a form,
 * to the page the form was on (its same-site Referer; a form's own address may have no page).
 */
export async function requireSignIn(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.webAccount) return;
  if (request.routeOptions.url === taskStatusRoute) {
    return reply.code(401).type('application/json').send({ error: { code: 'signed_out', message: 'Your session has ended; sign in again.' } });
  }
  const back = request.method === 'GET' ? request.url : formPage(request);
  return reply.redirect(back ? `/sign-in?next=${encodeURIComponent(back)}` : '/sign-in', 303);
}

function formPage(request: FastifyRequest): string | undefined {
  const raw = request.headers.referer;
  if (!raw || !URL.canParse(raw)) return undefined;
  const referer = new URL(raw);
  // The Host header itself, not request.host: behind a trusted proxy that would be X-Forwarded-Host,
  // which load balancers that do not set it (an AWS ALB) pass on from the visitor.
  return referer.host === request.headers.host ? `${referer.pathname}${referer.search}` : undefined;
}

export function signedInAccount(request: FastifyRequest): Account {
  if (!request.webAccount) throw new Error('route needs requireSignIn');
  return request.webAccount;
}
