// Where a task's image comes from: an upload made in the browser, or its image_url fetched safely.
// A free-plan web task is scaled down to its preview size before it is processed.
import type { Config } from '../config.ts';
import { TaskError } from '../domain/errors.ts';
import { fetchImage } from '../fetch/safe-fetch.ts';
import type { UploadStore } from '../storage/upload-store.ts';
import type { Db } from '../store/database.ts';
import type { Task } from '../store/task-row.ts';
import { findTaskSource } from '../store/web-tasks-repository.ts';
import { downscaleToPixels } from '../vision/downscale.ts';
import { retryStoreUntil } from './retry.ts';

export type SourceReader = (task: Task) => Promise<Buffer>;

/** `onRetry` hears of each failed attempt at the task's database lookup before it is tried again. */
export function createSourceReader(config: Config, db: Db, uploads: UploadStore, onRetry: (err: unknown) => void = () => {}): SourceReader {
  return async (task) => {
    // The one database read inside a task's work: an outage here (a dropped connection) is retried
    // for as long as a lease lasts, as the task's ending is (worker.ts), instead of failing a task
    // whose image is fine. The multi-process test that cuts connections caught it failing one. An
    // outage longer than that (a failover) gives the attempt back, as one of our stores does.
    const source = await retryStoreUntil('The database', () => findTaskSource(db, task.id), Date.now() + config.leaseMs, onRetry);
    let data: Buffer;
    if (source?.uploadKey) {
      const uploadKey = source.uploadKey;
      const upload = await retryStoreUntil('The store of uploads', () => uploads.read(uploadKey), Date.now() + config.leaseMs, onRetry);
      if (!upload) throw new TaskError('image_download_failed', 'The uploaded image is no longer stored.');
      data = upload;
    } else {
      const download = await fetchImage(task.image_url, {
        maxBytes: config.fetch.maxBytes,
        timeoutMs: config.fetch.timeoutMs,
        maxRedirects: config.fetch.maxRedirects,
        allowPrivateAddresses: config.allowPrivateImageUrls,
      });
      data = download.data;
    }
    if (source?.maxPixels) {
      try {
        data = await downscaleToPixels(data, source.maxPixels, config.maxPixels);
      } catch (err) {
        if (err instanceof TaskError) throw err;
        throw new TaskError('unsupported_image', 'The image data could not be decoded.');
      }
    }
    return data;
  };
}
