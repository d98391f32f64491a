// The bucket's reads, writes and deletes, shared by the result store and the store of web uploads
// (both in the same bucket). Each call gets one deadline, CUTOUT_S3_TIMEOUT_SECONDS, for the whole
// of it, across the SDK's attempts and a read's body: the SDK's own timeouts end once the headers
// are in, and a bucket that then stalls mid-body would hold its reader (a thumbnail, a worker's
// task) for good; and each of its attempts gets the timeout afresh, so a bucket that never answers
// held each delete of a retention sweep, and each web upload's request, for several times it.
// A large object gets the deadline once for each 32 MiB of its body begun (allowedMs), so that a slow
// but steady link to the bucket is not cut off: a 100 MB result needs more than 3 MB/s to arrive in 30 s.
// A failure of the bucket leaves here as a StoreUnavailableError: the SDK's own errors carry socket
// codes (ECONNRESET, ETIMEDOUT) that the API and the web app would take for the database's outage.
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, type GetObjectCommandOutput, type S3Client } from '@aws-sdk/client-s3';
import type { S3Config } from '../config.ts';
import { StoreUnavailableError } from '../domain/errors.ts';

/** An object being received: its body, ended by the deadline if it has not arrived by then. */
export interface ObjectBody {
  body: Readable;
  /** As the bucket gave it; undefined when it gave none. */
  length: number | undefined;
}

/**
 * The object at `objectKey` (the bucket's whole key, prefix included), or undefined when it is not
 * there. The body is ended here at the deadline, not left to whatever the SDK does with an abort
 * that comes after its answer.
 */
export async function getObject(client: S3Client, config: S3Config, objectKey: string): Promise<ObjectBody | undefined> {
  const started = Date.now();
  // Only the wait for the answer: an abort after it would end the body at the first deadline, where
  // a large one is allowed longer (below).
  const answer = new AbortController();
  const unanswered = setTimeout(() => answer.abort(new Error(`the bucket did not answer within ${config.timeoutMs} ms`)), config.timeoutMs);
  let object: GetObjectCommandOutput;
  try {
    object = await client.send(new GetObjectCommand({ Bucket: config.bucket, Key: objectKey }), { abortSignal: answer.signal });
  } catch (err) {
    if (isMissing(err)) return undefined;
    if (isBucketFailure(err)) throw new StoreUnavailableError('The bucket', err);
    throw err;
  } finally {
    clearTimeout(unanswered);
  }
  const body = object.Body;
  if (!(body instanceof Readable)) throw new Error('the bucket sent an object without a readable body');
  const allowed = allowedMs(config, object.ContentLength ?? 0);
  const stall = () => body.destroy(new StoreUnavailableError('The bucket', new Error(`the bucket did not send the object within ${allowed} ms`)));
  // Unreferenced, as AbortSignal.timeout's timers are: a body nobody reads keeps no process alive.
  const deadline = setTimeout(stall, Math.max(0, started + allowed - Date.now())).unref();
  body.once('close', () => clearTimeout(deadline));
  return { body, length: object.ContentLength };
}

/** How long a call moving a body of `bytes` may take in all: CUTOUT_S3_TIMEOUT_SECONDS for each 32 MiB begun. */
export function allowedMs(config: Pick<S3Config, 'timeoutMs'>, bytes: number): number {
  return config.timeoutMs * Math.max(1, Math.ceil(bytes / (32 << 20)));
}

/**
 * The whole object at `objectKey`, or undefined when it is not there. A body that breaks off (the
 * connection lost mid-way) is the bucket's failure as much as one that never starts.
 */
export async function readObject(client: S3Client, config: S3Config, objectKey: string): Promise<Buffer | undefined> {
  const object = await getObject(client, config, objectKey);
  if (!object) return undefined;
  return buffer(object.body).catch((err: unknown) => {
    throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError('The bucket', err);
  });
}

/**
 * Deletes the object at `objectKey` (deleting one that is not there succeeds). A failure of the
 * bucket rather than of this object is a StoreUnavailableError, which every other object would meet
 * too: a retention sweep stops at it instead of waiting it out once per file.
 */
export async function deleteObject(client: S3Client, config: S3Config, objectKey: string): Promise<void> {
  try {
    await client.send(new DeleteObjectCommand({ Bucket: config.bucket, Key: objectKey }), { abortSignal: AbortSignal.timeout(config.timeoutMs) });
  } catch (err) {
    if (isBucketFailure(err)) throw new StoreUnavailableError('The bucket', err);
    throw err;
  }
}

/**
 * Stores `data` at `objectKey`. A failure of the bucket is a StoreUnavailableError, as for a delete:
 * the web upload that meets it is answered as an outage of the storage, and the worker retries its
 * result's write through it.
 */
export async function putObject(client: S3Client, config: S3Config, objectKey: string, data: Buffer, contentType: string): Promise<void> {
  const command = new PutObjectCommand({ Bucket: config.bucket, Key: objectKey, Body: data, ContentType: contentType, ContentLength: data.length });
  // The client's requestTimeout (s3-result-store.ts) bounds each attempt until the answer, the body's
  // sending included: a large body's attempt is given as long as the whole call.
  const allowed = allowedMs(config, data.length);
  try {
    await client.send(command, { abortSignal: AbortSignal.timeout(allowed), requestTimeout: allowed });
  } catch (err) {
    if (isBucketFailure(err)) throw new StoreUnavailableError('The bucket', err);
    throw err;
  }
}

/**
 * No answer (unreachable, past the deadline, no credentials to sign with), a server error, or
 * throttling, which S3 answers with 503 SlowDown and other S3-compatible servers with 429: the SDK
 * has retried it already. Any other 4xx answer is about the request, and may be about this object
 * alone (one under an Object Lock retention).
 */
function isBucketFailure(err: unknown): boolean {
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === undefined || status >= 500 || status === 429;
}

/**
 * An object that is not there: NoSuchKey, or a 404 that an S3-compatible server names otherwise.
 * A missing bucket is a fault (the configuration's), not a missing object.
 */
function isMissing(err: unknown): boolean {
  if (err instanceof NoSuchKey) return true;
  const { name, $metadata } = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return $metadata?.httpStatusCode === 404 && name !== 'NoSuchBucket';
}
