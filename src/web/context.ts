import type { Config } from '../config.ts';
import type { Db } from '../store/database.ts';
import type { DiskResultStore } from '../storage/disk-result-store.ts';
import type { ResultUrlSigner } from '../storage/signed-url.ts';
import type { DiskUploadStore } from '../storage/upload-store.ts';
import type { CreditOffer } from './credit-offers.ts';

/** What the web pages need, built once at start. */
export interface WebContext {
  config: Config;
  db: Db;
  results: DiskResultStore;
  uploads: DiskUploadStore;
  signer: ResultUrlSigner;
  /** How an account can get more credits; the operator's CLI until a payment provider is plugged in. */
  creditOffer: CreditOffer;
  onTaskCreated: () => void;
}

/** Free-plan web results are previews of at most this many pixels (0.25 megapixels). */
export const previewMaxPixels = 250_000;
