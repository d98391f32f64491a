// Liveness, readiness and metrics, served by API processes and by the worker's small port alike.
// Not part of the v1 interface, so hidden from the OpenAPI description.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, LogLevel } from 'fastify';
import pino from 'pino';
import { withinMs } from '../../deadline.ts';
import type { Metrics } from '../../metrics.ts';
import { bearerToken } from '../bearer-token.ts';

export interface ReadinessCheck {
  name: string;
  /** Throws when the dependency cannot serve; should give up by itself after timeoutMs. */
  check: (timeoutMs: number) => Promise<void>;
}

/**
 * How long one readiness check may take before it counts as failing. A store that hangs instead of
 * refusing (a partition, a bucket that accepts connections and never answers) would otherwise hold
 * the probe for as long as its own timeouts, or for good, and the orchestrator would learn nothing.
 */
export const readinessTimeoutMs = 2000;

class CheckTimedOut extends Error {
  override name = 'CheckTimedOut';
  readonly code = 'readiness_check_timed_out';
}

function atLeastWarn(level: string): LogLevel {
  const { values } = pino.levels;
  return level === 'silent' || (values[level] ?? 0) > values.warn! ? (level as LogLevel) : 'warn';
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Whether the request carries the metrics token. Compared as digests in constant time, so neither
 * the token's length nor its characters can be learnt from how long a refusal takes.
 */
function carriesToken(request: FastifyRequest, token: string): boolean {
  const sent = bearerToken(request.headers.authorization);
  return sent !== undefined && timingSafeEqual(digest(sent), digest(token));
}

/**
 * `metricsToken`, when set, is required as a bearer token on /metrics: the metrics show the
 * queue, the credits charged and the process's memory, and each scrape reads the database.
 * The probes stay open, as orchestrators call them without credentials.
 */
export function registerHealthRoutes(app: FastifyInstance, metrics: Metrics, checks: ReadinessCheck[], metricsToken: string | undefined): void {
  // Probes and scrapes come every few seconds: their request lines would drown the log. A route's
  // level replaces the process's, so it is never set below it (LOG_LEVEL=error stays error).
  const quiet = { schema: { hide: true }, logLevel: atLeastWarn(app.log.level) } as const;
  app.get('/healthz', quiet, async () => ({ status: 'ok' }));

  app.get('/readyz', quiet, async (request, reply) => {
    const results = await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await withinMs(check(readinessTimeoutMs), readinessTimeoutMs, () => new CheckTimedOut(`no answer within ${readinessTimeoutMs} ms`));
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

  app.get('/metrics', quiet, async (request, reply) => {
    if (metricsToken !== undefined && !carriesToken(request, metricsToken)) {
      // At info: scanners probe /metrics on public hosts, and a warning each time would flood the log.
      request.log.info('a /metrics request without the metrics token was refused');
      return reply.code(401).header('WWW-Authenticate', 'Bearer realm="metrics"').type('text/plain').send('/metrics needs the metrics token: Authorization: Bearer <CUTOUT_METRICS_TOKEN>\n');
    }
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
