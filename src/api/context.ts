import type { onRequestAsyncHookHandler } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/database.ts';
import type { Metrics } from '../metrics.ts';
import type { DiskResultStore } from '../storage/disk-result-store.ts';
import type { ResultLinks, ResultReader } from '../storage/result-store.ts';
import type { ResultUrlSigner } from '../storage/signed-url.ts';
import type { UploadStore } from '../storage/upload-store.ts';
import type { ReadinessCheck } from './plugins/health.ts';

/** What the routes need, built once at start. */
export interface ApiContext {
  config: Config;
  db: Db;
  /** Links put in output.url: this service's signed download route, or presigned bucket URLs. */
  links: ResultLinks;
  /** The local result folder the download route serves; undefined when results live in a bucket. */
  downloads: DiskResultStore | undefined;
  /** Reads results back (the folder or the bucket) for the web app's history thumbnails. */
  results: ResultReader;
  signer: ResultUrlSigner;
  /** Base of absolute URLs this service hands out: CUTOUT_PUBLIC_URL, else the bound address once listening. */
  baseUrl: () => string;
  /** Images uploaded in the web app, beside the results (disk or bucket). */
  uploads: UploadStore;
  metrics: Metrics;
  readiness: ReadinessCheck[];
  authenticate: onRequestAsyncHookHandler;
  /** Wakes an in-process worker at once instead of at its next poll. */
  onTaskCreated: () => void;
}
