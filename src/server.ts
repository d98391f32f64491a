// Starts the service: store, HTTP API, maintenance and, by default, an in-process worker.
import type http from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './api/app.ts';
import { authenticate } from './api/plugins/authenticate.ts';
import { RateLimiter, type RateLimit } from './api/rate-limiter.ts';
import { SharedRateLimiter } from './api/shared-rate-limiter.ts';
import { bootstrapLocalAccount } from './bootstrap.ts';
import type { Config } from './config.ts';
import { listen } from './listen.ts';
import { createLogger, withLogSerializers } from './logger.ts';
import { Metrics } from './metrics.ts';
import { engineOf, openDatabase, pingDatabase, type Db } from './store/database.ts';
import { openResults } from './storage/open-results.ts';
import { loadSigningSecret, ResultUrlSigner } from './storage/signed-url.ts';
import { Maintenance } from './worker/maintenance.ts';
import type { Worker } from './worker/worker.ts';

export interface StartOptions {
  /** Run the in-process worker (default true). */
  worker?: boolean;
  logger?: Logger;
  /** Where the one-time bootstrap key is printed. */
  print?: (text: string) => void;
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  db: Db;
  config: Config;
  worker: Worker | undefined;
  maintenance: Maintenance;
  metrics: Metrics;
  bootstrapKey: string | undefined;
  /** Stops taking requests and claiming tasks; in-flight tasks get the shutdown grace period. */
  close(): Promise<void>;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ? withLogSerializers(options.logger) : createLogger(config);
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize, queryTimeoutMs: config.databaseQueryTimeoutMs });
  let baseUrl = config.publicUrl ?? '';
  const signer = new ResultUrlSigner(loadSigningSecret(config.dataDir, config.signingSecret), () => baseUrl, config.resultUrlTtlSeconds);
  const results = openResults(config);
  const metrics = new Metrics(db);

  const bootstrap = config.bootstrap ? await bootstrapLocalAccount(db, logger, options.print ?? ((t) => process.stdout.write(`${t}\n`))) : undefined;

  let worker: Worker | undefined;
  if (options.worker ?? true) {
    const { createWorker } = await import('./worker/start-worker.ts');
    worker = await createWorker(config, db, results, logger, metrics);
  }

  const app = await buildApp(
    {
      config,
      db,
      links: results.presigner ?? signer,
      downloads: results.downloads,
      results: results.reader,
      uploads: results.uploads,
      signer,
      baseUrl: () => baseUrl,
      metrics,
      readiness: [
        { name: 'database', check: () => pingDatabase(db) },
        { name: 'storage', check: (timeoutMs) => results.store.check(timeoutMs) },
      ],
      authenticate: authenticate(db, rateLimit(db, config.rateLimitPerMinute, logger)),
      onTaskCreated: () => worker?.notify(),
    },
    logger,
  );
  const drain = drainOnClose(app.server);
  await listen(app, config.host, 'PORT', config.port);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  baseUrl = config.publicUrl ?? `http://${host}:${port}`;

  const maintenance = new Maintenance(db, results.store, config, logger);
  maintenance.start();
  worker?.start();
  logger.info({ url: baseUrl, worker: worker !== undefined, engine: config.databaseUrl ? 'postgres' : 'sqlite', results: config.s3 ? 's3' : 'disk' }, 'cutout is listening');

  return {
    url: baseUrl,
    app,
    db,
    config,
    worker,
    maintenance,
    metrics,
    bootstrapKey: bootstrap?.key,
    async close() {
      const sweeping = maintenance.stop();
      const stopping = worker?.stop(config.shutdownGraceMs);
      const closing = app.close();
      drain(config.shutdownGraceMs);
      await closing;
      await stopping;
      await sweeping;
      results.close();
      await db.destroy();
    },
  };
}

/**
 * How the API's connections end at shutdown (Fastify's close stops listening and waits for them):
 * idle keep-alive connections are closed at once; a request in flight, its body still arriving
 * included, is finished and answered with `Connection: close`, so its connection ends with its
 * response instead of lingering for the keep-alive timeout; whatever is still open after graceMs is
 * cut. Returns the function that starts this, once the server is closing.
 */
function drainOnClose(server: http.Server): (graceMs: number) => void {
  const inFlight = new Set<http.ServerResponse>();
  let closing = false;
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (closing && !res.headersSent) res.setHeader('connection', 'close');
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      if (closing) server.closeIdleConnections();
    });
  });
  return (graceMs) => {
    closing = true;
    for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.once('close', () => clearTimeout(timer));
  };
}

/**
 * On PostgreSQL many API processes may serve one database, so the count per key lives there. On
 * SQLite one process serves the API and counts in memory, which costs a create or a poll nothing.
 */
function rateLimit(db: Db, perMinute: number, logger: Logger): RateLimit {
  if (engineOf(db) !== 'postgres') return new RateLimiter(perMinute);
  return new SharedRateLimiter(db, perMinute, (err) => logger.warn({ err }, 'removing past rate-limit windows failed; the next request tries again'));
}
