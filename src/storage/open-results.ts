// Chooses where results live from the configuration: an S3 bucket when CUTOUT_S3_BUCKET is set,
// else the data folder, whose links are this service's own signed download route.
import path from 'node:path';
import type { Config } from '../config.ts';
import { DiskResultStore } from './disk-result-store.ts';
import type { ResultLinks, ResultReader, ResultStore } from './result-store.ts';
import { S3ResultStore } from './s3-result-store.ts';
import { S3UploadStore } from './s3-upload-store.ts';
import { DiskUploadStore, type UploadStore } from './upload-store.ts';

export interface Results {
  store: ResultStore;
  /** Presigned bucket URLs; undefined for disk results, which the API signs itself. */
  presigner: ResultLinks | undefined;
  /** Served by the download route; only for results on local disk. */
  downloads: DiskResultStore | undefined;
  /** Reads results back, from the folder or the bucket: for the history list's thumbnails. */
  reader: ResultReader;
  /** Web uploads live beside the results, so a worker on another machine can read them. */
  uploads: UploadStore;
  close(): void;
}

export function openResults(config: Config): Results {
  if (config.s3) {
    const s3 = new S3ResultStore(config.s3, config.resultUrlTtlSeconds);
    const uploads = new S3UploadStore(s3.client, config.s3);
    return { store: s3, presigner: s3, downloads: undefined, reader: s3, uploads, close: () => s3.close() };
  }
  const disk = new DiskResultStore(path.join(config.dataDir, 'results'));
  const uploads = new DiskUploadStore(path.join(config.dataDir, 'uploads'));
  return { store: disk, presigner: undefined, downloads: disk, reader: disk, uploads, close: () => {} };
}
