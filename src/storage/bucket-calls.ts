// The bucket's reads, writes and deletes, shared by the result store and the store of web uploads
// (both in the same bucket). Each call gets one deadline, CUTOUT_S3_TIMEOUT_SECONDS, for the whole
// of it, across the SDK's attempts and a read's body: the SDK's own timeouts end once the headers
// are in, and a bucket that then stalls mid-body would hold its reader (a thumbnail, a worker's
// task) for good; and each of its attempts gets the timeout afresh, so a bucket that never answers
// held each delete of a retention sweep, and each web upload's request, for several times it.
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
  const deadline = AbortSignal.timeout(config.timeoutMs);
  let object: GetObjectCommandOutput;
  try {
    object = await client.send(new GetObjectCommand({ Bucket: config.bucket, Key: objectKey }), { abortSignal: deadline });
  } catch (err) {
    if (isMissing(err)) return undefined;
    if (isBucketFailure(err)) throw new StoreUnavailableError('The bucket', err);
    throw err;
  }
  const body = object.Body;
  if (!(body instanceof Readable)) throw new Error('the bucket sent an object without a readable body');
  const stall = () => body.destroy(new StoreUnavailableError('The bucket', new Error(`the bucket did not send the object within ${config.timeoutMs} ms`)));
  deadline.addEventListener('abort', stall, { once: true });
  body.once('close', () => deadline.removeEventListener('abort', stall));
  if (deadline.aborted) stall();
  return { body, length: object.ContentLength };
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
  try {
    await client.send(command, { abortSignal: AbortSignal.timeout(config.timeoutMs) });
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
