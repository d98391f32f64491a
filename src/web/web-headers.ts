// The headers every answer of the web app carries, its pages' and its Not found page's alike
// (that one is answered from the server's root, outside the web app's scope and its hooks).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { cookiesSecure } from './session.ts';

const securityHeaders = {
  'Content-Security-Policy':
    "default-src 'self'; img-src * data: blob:; script-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
};

/** A year, for this host only: other hosts of the domain may not serve https. */
const hstsValue = 'max-age=31536000';

export function setWebHeaders(config: Config, request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(securityHeaders);
  // Wherever the cookies are Secure the browser is told to use https from then on, so a later
  // visit typed as http:// cannot be answered by someone on the network with a fake sign-in
  // page. Browsers ignore it on a plain-http answer, so a public https URL reached over http is no harm.
  if (cookiesSecure(config, request)) reply.header('Strict-Transport-Security', hstsValue);
  // A page holds a form token, and a signed-in one signed download links too; the sign-in page
  // also sets the form secret's cookie, which a shared cache would hand to every visitor. No
  // cache may keep any of them. A route that may be cached (assets, the owner's images) says so itself.
  if (!reply.hasHeader('cache-control')) reply.header('Cache-Control', 'no-store');
}
