// Result blobs in an S3-compatible bucket (AWS S3, MinIO, …). Workers upload; clients download
// straight from the bucket with a presigned GET URL, so no API process serves result bytes. API
// processes read results back only to make the history list's small thumbnails.
import type { Readable } from 'node:stream';
import { GetObjectCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../config.ts';
import { StoreUnavailableError } from '../domain/errors.ts';
import { deleteObject, getObject, putObject } from './bucket-calls.ts';
import {
  contentTypeOf,
  isResultKey,
  linkLifetimeSeconds,
  type OpenResult,
  type ResultLink,
  type ResultLinks,
  type ResultReader,
  type ResultStore,
} from './result-store.ts';

// SigV4 presigned URLs cannot live longer than seven days.
export const maxPresignSeconds = 7 * 24 * 3600;

export class S3ResultStore implements ResultStore, ResultLinks, ResultReader {
  /** Shared with the upload store, which keeps browser uploads in the same bucket. */
  readonly client: S3Client;

  constructor(
    private readonly config: S3Config,
    private readonly ttlSeconds: number,
  ) {
    if (ttlSeconds > maxPresignSeconds) throw new Error(`an S3 presigned URL lives at most ${maxPresignSeconds} s; CUTOUT_RESULT_URL_TTL_SECONDS is ${ttlSeconds}`);
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.credentials,
      maxAttempts: 3,
      // Without these a bucket that accepts connections but never answers holds a request forever,
      // and the worker's retry deadline (worker/process-task.ts) is never reached.
      requestHandler: { connectionTimeout: config.timeoutMs, requestTimeout: config.timeoutMs, throwOnRequestTimeout: true },
      // Checksums only where S3 requires them: many S3-compatible servers do not speak the
      // chunked-trailer uploads that the SDK otherwise sends by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private objectKey(key: string): string {
    if (!isResultKey(key)) throw new Error(`invalid result key ${JSON.stringify(key)}`);
    return `${this.config.prefix}${key}`;
  }

  /**
   * Within one deadline (bucket-calls.ts), so that each try of the worker's, which retries the
   * write for as long as its lease lasts, ends at CUTOUT_S3_TIMEOUT_SECONDS.
   */
  async put(key: string, data: Buffer): Promise<void> {
    await putObject(this.client, this.config, this.objectKey(key), data, contentTypeOf(key));
  }

  async delete(key: string): Promise<void> {
    await deleteObject(this.client, this.config, this.objectKey(key));
  }

  /** A write is one PutObject, which the bucket stores whole or not at all: nothing is left over. */
  async removeStaleTemporaries(): Promise<number> {
    return 0;
  }

  /** A result's length and body, for reading it back whole, within one deadline (bucket-calls.ts). */
  async open(key: string): Promise<OpenResult | undefined> {
    if (!isResultKey(key)) return undefined;
    const object = await getObject(this.client, this.config, this.objectKey(key));
    if (!object) return undefined;
    if (object.length === undefined) {
      object.body.destroy();
      throw new Error('the bucket sent an object without its length');
    }
    return new BucketObject(object.body, object.length);
  }

  /** One HeadBucket, ended at timeoutMs: the SDK's own timeouts and retries could take minutes. */
  async check(timeoutMs: number): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.config.bucket }), { abortSignal: AbortSignal.timeout(timeoutMs) });
  }

  /**
   * Presigning is local computation: no request reaches the bucket until the client downloads. A
   * URL signed with temporary credentials (a role's) stops working when they expire, so it is given
   * no longer than they last. Credentials that cannot be had (a role's, whose renewal fails while
   * the endpoint that hands them out is down or throttling) are an outage of the bucket, not a bug.
   */
  async link(key: string, now = Date.now(), deletedAt?: number): Promise<ResultLink> {
    const { expiration } = await this.client.config.credentials().catch((err: unknown) => {
      throw new StoreUnavailableError("The bucket's credentials", err);
    });
    const ends = expiration === undefined ? deletedAt : Math.min(deletedAt ?? Number.POSITIVE_INFINITY, expiration.getTime());
    const expiresIn = linkLifetimeSeconds(this.ttlSeconds, now, ends);
    const command = new GetObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) });
    const url = await getSignedUrl(this.client, command, { expiresIn, signingDate: new Date(now) });
    return { url, expiresAt: Math.floor(now / 1000) * 1000 + expiresIn * 1000 };
  }

  close(): void {
    this.client.destroy();
  }
}

/** An object being received: read its body once, or close it to drop the connection unread. */
class BucketObject implements OpenResult {
  constructor(
    private readonly body: Readable,
    readonly size: number,
  ) {}

  read(): Readable {
    return this.body;
  }

  async close(): Promise<void> {
    this.body.destroy();
  }
}
