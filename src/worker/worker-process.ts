// `cutout worker`: claims and runs tasks, no public API. A small port answers /healthz, /readyz
// (database and storage reachable, model loaded) and /metrics for the orchestrator and Prometheus.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { registerHealthRoutes } from '../api/plugins/health.ts';
import type { Config } from '../config.ts';
import { listen } from '../listen.ts';
import { createLogger, withLogSerializers } from '../logger.ts';
import { Metrics } from '../metrics.ts';
import { openDatabase, pingDatabase, type Db } from '../store/database.ts';
import { openResults } from '../storage/open-results.ts';
import { createWorker } from './start-worker.ts';
import type { Worker } from './worker.ts';

export interface RunningWorker {
  /** Base URL of the health and metrics port. */
  url: string;
  db: Db;
  worker: Worker;
  health: FastifyInstance;
  /** Stops claiming, gives in-flight tasks the grace period, releases the rest, and closes. */
  close(): Promise<{ released: number }>;
}

export async function startWorkerProcess(config: Config, options: { logger?: Logger } = {}): Promise<RunningWorker> {
  const logger = (options.logger ? withLogSerializers(options.logger) : createLogger(config)).child({ role: 'worker' });
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: Math.min(config.databasePoolSize, config.workerConcurrency + 2), queryTimeoutMs: config.databaseQueryTimeoutMs });
  const results = openResults(config);
  const metrics = new Metrics(db);
  let modelLoaded = false;

  const health = Fastify({ loggerInstance: logger as FastifyBaseLogger });
  registerHealthRoutes(health, metrics, [
    { name: 'database', check: () => pingDatabase(db) },
    { name: 'storage', check: (timeoutMs) => results.store.check(timeoutMs) },
    {
      name: 'model',
      check: async () => {
        if (!modelLoaded) throw new Error('the model is still loading');
      },
    },
  ], config.metricsToken);
  // The port answers while the model loads, so an orchestrator sees a live but not-ready worker.
  await listen(health, config.host, 'CUTOUT_METRICS_PORT', config.metricsPort);
  const address = health.server.address();
  const port = typeof address === 'object' && address ? address.port : config.metricsPort;

  let worker: Worker;
  try {
    worker = await createWorker(config, db, results, logger, metrics);
  } catch (err) {
    await health.close();
    await db.destroy();
    throw err;
  }
  modelLoaded = true;
  worker.start();
  logger.info({ healthPort: port, concurrency: config.workerConcurrency, engine: config.databaseUrl ? 'postgres' : 'sqlite' }, 'worker started');

  return {
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    db,
    worker,
    health,
    async close() {
      const outcome = await worker.stop(config.shutdownGraceMs);
      await health.close();
      results.close();
      await db.destroy();
      return outcome;
    },
  };
}
