// The readable docs (Swagger UI) at /docs. Their "Authorize" dialog takes an API key, so another
// site must not frame them and trick a visitor into typing one there (clickjacking): every answer
// in this scope, the page, its static assets and its JSON, says so, as the web app's pages do.
// Only framing is restricted: Swagger UI's own scripts and styles load as before.
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

const frameDenial = {
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "frame-ancestors 'none'",
};

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers(frameDenial);
    return payload;
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
}
