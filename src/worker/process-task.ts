// One task's work: read the source (safe fetch or upload), remove the background, store the result.
import type { Config } from '../config.ts';
import { DiskResultStore } from '../storage/disk-result-store.ts';
import type { TaskResult } from '../store/task-queue.ts';
import type { Task } from '../store/task-row.ts';
import { removeBackground, type Segmenter } from '../vision/remove-background.ts';
import type { SourceReader } from './task-source.ts';
import type { TaskProcessor } from './worker.ts';

export function createTaskProcessor(config: Config, segmenter: Segmenter, results: DiskResultStore, readSource: SourceReader): TaskProcessor {
  return async (task: Task): Promise<TaskResult> => {
    const source = await readSource(task);
    const cutout = await removeBackground(segmenter, source, {
      subject: task.subject,
      precision: task.precision,
      format: task.output_format,
      maxPixels: config.maxPixels,
    });
    const key = DiskResultStore.keyFor(task.id, cutout.format);
    await results.put(key, cutout.data);
    return { key, width: cutout.width, height: cutout.height };
  };
}
