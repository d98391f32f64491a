// One task's work: read the source (safe fetch or upload), remove the background, store the result.
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { resultKey, type ResultStore } from '../storage/result-store.ts';
import type { TaskResult } from '../store/task-queue.ts';
import type { Task } from '../store/task-row.ts';
import { removeBackground, type Segmenter } from '../vision/remove-background.ts';
import type { SourceReader } from './task-source.ts';
import type { TaskProcessor } from './worker.ts';

export function createTaskProcessor(config: Pick<Config, 'maxPixels'>, segmenter: Segmenter, results: ResultStore, readSource: SourceReader, metrics?: Metrics): TaskProcessor {
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
    await stage('store', () => results.put(key, cutout.data));
    return { key, width: cutout.width, height: cutout.height };
  };
}
