// Liveness, readiness and metrics, served by API processes and by the worker's small port alike.
// Not part of the v1 interface, so hidden from the OpenAPI description.
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../metrics.ts';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

export function registerHealthRoutes(app: FastifyInstance, metrics: Metrics, checks: ReadinessCheck[]): void {
  // Probes and scrapes come every few seconds: their request lines would drown the log.
  const quiet = { schema: { hide: true }, logLevel: 'warn' } as const;
  app.get('/healthz', quiet, async () => ({ status: 'ok' }));

  app.get('/readyz', quiet, async (request, reply) => {
    const results = await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await check();
          return [name, 'ok'] as const;
        } catch (err) {
          request.log.warn({ err, check: name }, 'readiness check failed');
          return [name, 'failing'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  });

  app.get('/metrics', quiet, async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.header('Content-Type', metrics.registry.contentType).send(body);
  });

  // Callback style, not async: this runs for every request, and a promise each time showed in the
  // bench:api profile.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
