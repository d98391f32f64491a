// The HTTP application: framework plugins first, then our plugins, then one file per resource.
import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { randomToken } from '../domain/ids.ts';
import { trustedProxy } from '../trusted-proxies.ts';
import type { ApiContext } from './context.ts';
import { docsRoutes } from './docs.ts';
import { openApiDocument, publishComponents, transformRoute } from './openapi-document.ts';
import { apiDescription } from './openapi-info.ts';
import { answerClientError, answerConnect, answerUnmetExpectation, rememberRequestId } from './plugins/client-errors.ts';
import { apiCodings, contentCodings } from './plugins/content-coding.ts';
import { registerErrorHandling } from './plugins/error-handler.ts';
import { registerHealthRoutes } from './plugins/health.ts';
import { parseJsonBody } from './plugins/json-body.ts';
import { answerRouterRefusal } from './plugins/router-refusals.ts';
import { removalRoutes } from './routes/removals.ts';
import { resultRoutes } from './routes/results.ts';
import { notFoundPage } from '../web/not-found-page.ts';
import { webApp } from '../web/web-app.ts';

// Our own id for every request: unique, never taken from the client.
const newRequestId = (): string => `req_${randomToken(20)}`;

export async function buildApp(ctx: ApiContext, logger: Logger): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: 64 * 1024,
    // request.ip (the per-address sign-up and sign-in limits) and request.protocol (the session
    // cookie's Secure) then come from X-Forwarded-* headers, but only on connections from these
    // peers; links handed out never do (they are built on the public URL).
    trustProxy: ctx.config.trustedProxies ? trustedProxy(ctx.config.trustedProxies) : false,
    // Closing leaves connections to server.ts's close(): Fastify's default ('idle') would also cut a
    // request whose body is still arriving (Node counts its connection as idle).
    forceCloseConnections: false,
    // A request, its body included, must arrive within this; Fastify's default is no limit at all, so
    // a client dribbling its body held its connection (and an upload's parser) for as long as it liked.
    // Node's server must be built with it too: Fastify only sets it afterwards, and Node then cut a
    // stalled body at the larger of the two values, or never when Fastify's is 0 (its default).
    requestTimeout: ctx.config.requestTimeoutMs,
    http: {
      requestTimeout: ctx.config.requestTimeoutMs,
      // Node looks for late requests on this interval (30 s by default): a timeout within a tenth of itself.
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, ctx.config.requestTimeoutMs / 10)),
    },
    // Refusals that come before any route or hook still answer in the Error body with a request id.
    frameworkErrors: answerRouterRefusal(ctx.authenticate),
    clientErrorHandler: answerClientError(newRequestId),
  }).withTypeProvider<ZodTypeProvider>();

  app.server.on('checkExpectation', answerUnmetExpectation(newRequestId, app.log));
  app.server.on('connect', answerConnect(newRequestId, app.log));
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Only JSON bodies are part of the interface.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody);
  // Callback style, not async, like every hook that runs for each request (see health.ts).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    rememberRequestId(request.raw, request.id);
    done();
  });
  registerErrorHandling(app, notFoundPage(ctx.config));
  registerHealthRoutes(app, ctx.metrics, ctx.readiness, ctx.config.metricsToken);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Cutout background removal API', version: '1.0.0', description: apiDescription(ctx.config) },
      servers: [{ url: '/api/v1' }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (`cut_…`).' } } },
    },
    // The web app, the probes and the docs share the server but are not part of the interface,
    // whose paths are all relative to the server entry /api/v1.
    transform: (route) => (route.url.startsWith('/api/v1/') ? transformRoute(route) : { schema: { hide: true }, url: route.url }),
    transformObject: publishComponents,
  });
  await app.register(docsRoutes);

  await app.register(
    async (v1) => {
      v1.addHook('preParsing', contentCodings(apiCodings));
      await v1.register(removalRoutes(ctx));
      await v1.register(resultRoutes(ctx));
      v1.get('/openapi.json', { schema: { hide: true } }, async () => openApiDocument(app));
    },
    { prefix: '/api/v1' },
  );
  await app.register(webApp(ctx));
  return app;
}
