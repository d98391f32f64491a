// An address no route takes, as a browser typed it: the web app's Not found page instead of the
// API's Error body, which a browser shows as raw JSON. A client that prefers JSON, or names no type
// (curl's */*), keeps the Error body (api/plugins/error-handler.ts decides, and keeps it for /api).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { NotFoundPage } from '../api/plugins/error-handler.ts';
import { sendNotFound } from './pages/auth-pages.ts';
import { setWebHeaders } from './web-headers.ts';

/** The q value (RFC 9110 §12.4.2) that the most specific range of `accept` gives `type`; 0 where none matches. */
export function acceptQuality(accept: string, type: string): number {
  const anyOfKind = `${type.split('/')[0]}/*`;
  let specificity = -1;
  let quality = 0;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const rank = range === type ? 2 : range === anyOfKind ? 1 : range === '*/*' ? 0 : -1;
    if (rank <= specificity) continue;
    const q = params.find((param) => param.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    specificity = rank;
    quality = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
  }
  return quality;
}

/** A browser names text/html above the rest; a tie with JSON goes to the API's JSON. */
function prefersPage(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  const page = acceptQuality(accept, 'text/html');
  return page > 0 && page > acceptQuality(accept, 'application/json');
}

export function notFoundPage(config: Config): NotFoundPage {
  return {
    takes: prefersPage,
    send(request: FastifyRequest, reply: FastifyReply) {
      // Answered from the server's root, where the web app's onSend hook does not run.
      setWebHeaders(config, request, reply);
      return sendNotFound(reply);
    },
  };
}
