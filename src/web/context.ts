import type { Config } from '../config.ts';
import type { Db } from '../store/database.ts';
import type { ResultLinks, ResultReader } from '../storage/result-store.ts';
import type { UploadStore } from '../storage/upload-store.ts';
import type { CreditOffer } from './credit-offers.ts';

/** What the web pages need, built once at start. */
export interface WebContext {
  config: Config;
  db: Db;
  /** Download links for results: this service's signed route, or presigned bucket URLs. */
  links: ResultLinks;
  /** Where thumbnails read results from: the data folder, or the bucket when results live there. */
  results: ResultReader;
  uploads: UploadStore;
  /** The service's own base URL, as in result links; never taken from a request's Host header. */
  baseUrl: () => string;
  /** How an account can get more credits; the operator's CLI until a payment provider is plugged in. */
  creditOffer: CreditOffer;
  onTaskCreated: () => void;
}

/** Free-plan web results are previews of at most this many pixels (0.25 megapixels). */
export const previewMaxPixels = 250_000;
