// Result blobs in an S3-compatible bucket (AWS S3, MinIO, …). Workers upload; clients download
// straight from the bucket with a presigned GET URL, so no API process serves result bytes. API
// processes read results back only to make the history list's small thumbnails.
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, NoSuchKey, PutObjectCommand, S3Client, type GetObjectCommandOutput } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../config.ts';
import { StoreUnavailableError } from '../domain/errors.ts';
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

  async put(key: string, data: Buffer): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key), Body: data, ContentType: contentTypeOf(key), ContentLength: data.length }),
    );
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) }));
  }

  /**
   * A result's length and body, for reading it back whole. The whole read, body included, gets
   * CUTOUT_S3_TIMEOUT_SECONDS, across the SDK's attempts: its own timeouts end once the headers
   * are in, and a bucket that then stalls mid-body would hold its reader (the one-at-a-time
   * thumbnail queue) for good. The body is ended here at the deadline, not left to whatever the
   * SDK does with an abort that comes after its answer.
   */
  async open(key: string): Promise<OpenResult | undefined> {
    if (!isResultKey(key)) return undefined;
    const deadline = AbortSignal.timeout(this.config.timeoutMs);
    let object: GetObjectCommandOutput;
    try {
      object = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) }), { abortSignal: deadline });
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    const body = object.Body;
    if (!(body instanceof Readable)) throw new Error('the bucket sent an object without a readable body');
    const stall = () => body.destroy(new Error(`the bucket did not send the object within ${this.config.timeoutMs} ms`));
    deadline.addEventListener('abort', stall, { once: true });
    body.once('close', () => deadline.removeEventListener('abort', stall));
    if (deadline.aborted) stall();
    if (object.ContentLength === undefined) {
      body.destroy();
      throw new Error('the bucket sent an object without its length');
    }
    return new BucketObject(body, object.ContentLength);
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

/**
 * An object that is not there: NoSuchKey, or a 404 that an S3-compatible server names otherwise.
 * A missing bucket is a fault (the configuration's), not a missing result.
 */
function isMissing(err: unknown): boolean {
  if (err instanceof NoSuchKey) return true;
  const { name, $metadata } = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return $metadata?.httpStatusCode === 404 && name !== 'NoSuchBucket';
}
