// Builds a worker with its model session. Kept apart from the API so a process that only serves
// HTTP never loads the model.
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Db } from '../store/database.ts';
import type { Results } from '../storage/open-results.ts';
import { loadSegmenter, type SegmenterOptions } from '../vision/remove-background.ts';
import { createTaskProcessor } from './process-task.ts';
import { createSourceReader } from './task-source.ts';
import { Worker } from './worker.ts';

/**
 * Intra-op threads per inference: every core. The process has one session and its runs take
 * turns, so worker slots beyond the first overlap downloads and encoding with inference rather
 * than running inferences side by side.
 */
export function inferenceThreads(config: Config): number {
  return config.inferenceThreads ?? os.availableParallelism();
}

/** How this process's one model session is built for the configured worker. */
export function segmenterOptions(config: Config): SegmenterOptions {
  return { threads: inferenceThreads(config), cacheDir: path.join(config.dataDir, 'models') };
}

export async function createWorker(config: Config, db: Db, results: Results, logger: Logger, metrics?: Metrics): Promise<Worker> {
  const loaded = await loadSegmenter(segmenterOptions(config));
  // At debug level each model pass is logged as it is handed to the inference thread: the shutdown
  // tests signal a worker mid-pass on this line.
  const segmenter: typeof loaded = logger.isLevelEnabled('debug')
    ? {
        predict(rgb, side) {
          logger.debug({ side }, 'model pass started');
          return loaded.predict(rgb, side);
        },
      }
    : loaded;
  return new Worker({
    db,
    logger,
    metrics,
    process: createTaskProcessor(
      config,
      segmenter,
      results.store,
      createSourceReader(config, db, results.uploads, (err) => logger.warn({ err }, "reading the task's source failed; retrying")),
      metrics,
      (err) => logger.warn({ err }, 'storing the result failed; retrying'),
    ),
    results: results.store,
    concurrency: config.workerConcurrency,
    leaseMs: config.leaseMs,
    maxAttempts: config.maxAttempts,
    pollMs: config.workerPollMs,
  });
}
