// One task's work: read the source (safe fetch or upload), remove the background, store the result.
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { resultKey, type ResultStore } from '../storage/result-store.ts';
import type { TaskResult } from '../store/task-queue.ts';
import type { Task } from '../store/task-row.ts';
import { removeBackground, type Segmenter } from '../vision/remove-background.ts';
import type { SourceReader } from './task-source.ts';
import { retryStoreUntil } from './retry.ts';
import type { TaskProcessor } from './worker.ts';

/** `onStoreRetry` hears of each failed write of a result before it is tried again. */
export function createTaskProcessor(
  config: Pick<Config, 'maxPixels' | 'leaseMs'>,
  segmenter: Segmenter,
  results: ResultStore,
  readSource: SourceReader,
  metrics?: Metrics,
  onStoreRetry: (err: unknown) => void = () => {},
): TaskProcessor {
  const stage = <T>(name: 'fetch' | 'remove' | 'store', fn: () => Promise<T>): Promise<T> => (metrics ? metrics.stage(name, fn) : fn());
  return async (task: Task): Promise<TaskResult> => {
    const source = await stage('fetch', () => readSource(task));
    const cutout = await stage('remove', () =>
      removeBackground(segmenter, source, {
        subject: task.subject,
        precision: task.precision,
        format: task.output_format,
        maxPixels: config.maxPixels,
      }),
    );
    const key = resultKey(task.id, task.claims, task.output_format);
    // A store outage (a bucket that does not answer) must not throw away the finished cutout, nor
    // fail a task whose image is fine: the write is retried for as long as a lease lasts (the
    // heartbeat keeps it), and then the attempt is given back to the queue.
    await stage('store', () =>
      retryStoreUntil('The result store', () => results.put(key, cutout.data), Date.now() + config.leaseMs, onStoreRetry),
    );
    return { key, width: cutout.width, height: cutout.height };
  };
}
