// The browser app, served by the same Fastify server as the API. Its plugins (cookies, form
// bodies, CSRF) are registered in this encapsulated scope only, so the API's JSON-only interface is
// unchanged. Multipart bodies are parsed for the upload form alone (routes/removals.ts).
import fs from 'node:fs';
import path from 'node:path';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import { ZodError } from 'zod';
import type { ApiContext } from '../api/context.ts';
import type { WebContext } from './context.ts';
import { operatorCreditOffer } from './credit-offers.ts';
import { formatBytes } from './html.ts';
import { errorPage } from './pages/auth-pages.ts';
import { authRoutes } from './routes/auth.ts';
import { creditRoutes } from './routes/credits.ts';
import { historyRoutes } from './routes/history.ts';
import { keyRoutes } from './routes/keys.ts';
import { removalRoutes } from './routes/removals.ts';
import { taskMediaRoutes } from './routes/task-media.ts';
import { registerFormTokens } from './form-secret.ts';
import { loadSession } from './session.ts';
import { setWebHeaders } from './web-headers.ts';
import { scheduleWebMaintenance } from './web-maintenance.ts';
import { clientAbort } from '../api/plugins/client-abort.ts';
import { contentCodings } from '../api/plugins/content-coding.ts';
import { databaseOutageRetrySeconds, outageOf } from '../store/database-outage.ts';
import { ApiError } from '../domain/errors.ts';

// Resolves to src/web/assets both from src/web (tsx) and from dist/web (the build).
const assetsDir = path.join(import.meta.dirname, '../../src/web/assets');
// A Map, not an object: the name comes from the URL, and an object would answer `constructor` or
// `__proto__` with a property every object has (a reply without a content type, which crashed Node).
const assets = new Map<string, { type: string; body: string }>([
  ['web.css', { type: 'text/css; charset=utf-8', body: fs.readFileSync(path.join(assetsDir, 'web.css'), 'utf8') }],
  ['web.js', { type: 'text/javascript; charset=utf-8', body: fs.readFileSync(path.join(assetsDir, 'web.js'), 'utf8') }],
]);

export function webApp(api: ApiContext) {
  const ctx: WebContext = {
    config: api.config,
    db: api.db,
    links: api.links,
    results: api.results,
    onTaskCreated: api.onTaskCreated,
    uploads: api.uploads,
    baseUrl: api.baseUrl,
    creditOffer: operatorCreditOffer,
  };

  return async (app: FastifyInstance): Promise<void> => {
    await app.register(fastifyCookie);
    await app.register(fastifyFormbody, { bodyLimit: 16 * 1024 });
    await registerFormTokens(app, ctx.config);

    app.addHook('onRequest', loadSession(ctx.db, ctx.config));
    // Browsers never compress a form, and the upload form's parser reads the body as sent (not
    // what a preParsing hook hands on), so a form in any coding is refused 415, never misread.
    app.addHook('preParsing', contentCodings([]));
    app.addHook('onSend', async (request, reply, payload) => {
      setWebHeaders(ctx.config, request, reply);
      return payload;
    });
    app.setErrorHandler((err: FastifyError, request, reply) => {
      const send = (status: number, title: string, message: string, headers: Record<string, string> = {}) =>
        reply.code(status).headers(headers).type('text/html').send(errorPage(title, message, status));
      if (err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET') {
        request.log.info({ code: err.code }, 'CSRF check failed');
        return send(403, 'Form expired', 'This form was not sent from a current page of this site. Go back, reload the page and try again.');
      }
      const abort = clientAbort(err, request);
      // Answered 408 and logged on the socket already (client-errors.ts), which is closed now.
      if (abort === 'timed_out') return send(408, 'Request not accepted', 'The form did not arrive in time.');
      if (abort === 'closed') {
        request.log.info({ code: 'client_closed' }, 'The client closed the connection before the request body arrived.');
        return send(400, 'Request not accepted', 'The connection closed before the form arrived.');
      }
      if (err.code === 'FST_REQ_FILE_TOO_LARGE') {
        return send(413, 'File too large', `Images may be at most ${formatBytes(ctx.config.fetch.maxBytes)}.`);
      }
      // A query or route parameter a page cannot use is the request's fault, not the server's.
      if (err instanceof ZodError) return send(400, 'Request not accepted', 'The address has a parameter this page cannot use.');
      if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
        return send(err.statusCode, 'Request not accepted', err.message);
      }
      // A refusal of the parts the API shares with the pages (the JSON body parser: bytes that are
      // not UTF-8; a body's Content-Encoding, with the Accept-Encoding that goes with its 415).
      if (err instanceof ApiError && err.status < 500) return send(err.status, 'Request not accepted', err.message, err.headers);
      const outage = outageOf(err);
      if (outage) {
        request.log.error({ err }, `${outage} unavailable`);
        reply.header('Retry-After', String(databaseOutageRetrySeconds));
        return send(503, 'Temporarily unavailable', `The service cannot reach its database or its storage just now. Try again in a few seconds; if it goes on, quote the request id ${request.id}.`);
      }
      request.log.error({ err }, 'unhandled web error');
      return send(500, 'Something went wrong', `An unexpected error occurred; quote the request id ${request.id} when reporting it.`);
    });

    app.get('/assets/:name', async (request, reply) => {
      const asset = assets.get((request.params as { name: string }).name);
      if (!asset) return reply.code(404).type('text/plain').send('not found');
      return reply.header('Cache-Control', 'public, max-age=300').type(asset.type).send(asset.body);
    });

    await app.register(authRoutes(ctx));
    await app.register(keyRoutes(ctx));
    await app.register(creditRoutes(ctx));
    await app.register(removalRoutes(ctx));
    await app.register(taskMediaRoutes(ctx));
    await app.register(historyRoutes(ctx));

    const stopMaintenance = scheduleWebMaintenance({ db: ctx.db, uploads: ctx.uploads, config: ctx.config }, app.log);
    app.addHook('onClose', async () => stopMaintenance());
  };
}
