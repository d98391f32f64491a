// Builds a worker with its model session. Kept apart from the API so a process that only serves
// HTTP never loads the model.
import os from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Db } from '../store/database.ts';
import type { Results } from '../storage/open-results.ts';
import { loadSegmenter } from '../vision/remove-background.ts';
import { createTaskProcessor } from './process-task.ts';
import { createSourceReader } from './task-source.ts';
import { Worker } from './worker.ts';

/** Intra-op threads per inference: the cores shared among the tasks that run at once. */
export function inferenceThreads(config: Config): number {
  return config.inferenceThreads ?? Math.max(1, Math.floor(os.availableParallelism() / config.workerConcurrency));
}

export async function createWorker(config: Config, db: Db, results: Results, logger: Logger, metrics?: Metrics): Promise<Worker> {
  const segmenter = await loadSegmenter({ threads: inferenceThreads(config) });
  return new Worker({
    db,
    logger,
    metrics,
    process: createTaskProcessor(config, segmenter, results.store, createSourceReader(config, db, results.uploads), metrics),
    concurrency: config.workerConcurrency,
    leaseMs: config.leaseMs,
    maxAttempts: config.maxAttempts,
    pollMs: config.workerPollMs,
  });
}
