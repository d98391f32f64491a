// Starts the service: store, HTTP API, maintenance and, by default, an in-process worker.
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './api/app.ts';
import { authenticate } from './api/plugins/authenticate.ts';
import { RateLimiter } from './api/rate-limiter.ts';
import { bootstrapLocalAccount } from './bootstrap.ts';
import type { Config } from './config.ts';
import { createLogger } from './logger.ts';
import { openDatabase, type Db } from './store/database.ts';
import { DiskResultStore } from './storage/disk-result-store.ts';
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
  bootstrapKey: string | undefined;
  close(): Promise<void>;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config);
  const db = await openDatabase(config.dataDir);
  const results = new DiskResultStore(path.join(config.dataDir, 'results'));
  let baseUrl = config.publicUrl ?? '';
  const signer = new ResultUrlSigner(loadSigningSecret(config.dataDir, config.signingSecret), () => baseUrl, config.resultUrlTtlSeconds);

  const bootstrap = config.bootstrap ? await bootstrapLocalAccount(db, logger, options.print ?? ((t) => process.stdout.write(`${t}\n`))) : undefined;

  let worker: Worker | undefined;
  if (options.worker ?? true) {
    const { createWorker } = await import('./worker/start-worker.ts');
    worker = await createWorker(config, db, results, logger);
  }

  const app = await buildApp(
    {
      config,
      db,
      results,
      signer,
      authenticate: authenticate(db, new RateLimiter(config.rateLimitPerMinute)),
      onTaskCreated: () => worker?.notify(),
    },
    logger,
  );
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  baseUrl = config.publicUrl ?? `http://${host}:${port}`;

  const maintenance = new Maintenance(db, results, config, logger);
  maintenance.start();
  worker?.start();
  logger.info({ url: baseUrl, worker: worker !== undefined }, 'cutout is listening');

  return {
    url: baseUrl,
    app,
    db,
    config,
    worker,
    maintenance,
    bootstrapKey: bootstrap?.key,
    async close() {
      maintenance.stop();
      await app.close();
      await worker?.stop();
      await db.destroy();
    },
  };
}
