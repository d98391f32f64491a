import type { onRequestAsyncHookHandler } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/database.ts';
import type { DiskResultStore } from '../storage/disk-result-store.ts';
import type { ResultUrlSigner } from '../storage/signed-url.ts';

/** What the routes need, built once at start. */
export interface ApiContext {
  config: Config;
  db: Db;
  results: DiskResultStore;
  signer: ResultUrlSigner;
  authenticate: onRequestAsyncHookHandler;
  /** Wakes an in-process worker at once instead of at its next poll. */
  onTaskCreated: () => void;
}
