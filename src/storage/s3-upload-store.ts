// Browser uploads in the results bucket, under `uploads/` beside the results, so that a worker on
// any machine can read the image a web task was created from.
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Config } from '../config.ts';
import { deleteObject, putObject, readObject } from './bucket-calls.ts';
import { isUploadKey, type UploadStore } from './upload-store.ts';

export class S3UploadStore implements UploadStore {
  constructor(
    private readonly client: S3Client,
    private readonly config: S3Config,
  ) {}

  private objectKey(key: string): string {
    if (!isUploadKey(key)) throw new Error(`invalid upload key ${JSON.stringify(key)}`);
    return `${this.config.prefix}uploads/${key}`;
  }

  /** Within one deadline (bucket-calls.ts): the visitor's request waits for it. */
  async put(key: string, data: Buffer): Promise<void> {
    await putObject(this.client, this.config, this.objectKey(key), data, 'application/octet-stream');
  }

  /**
   * Read whole within one deadline (bucket-calls.ts): a bucket that stalls mid-body would otherwise
   * hold the worker's task for good, its heartbeat renewing the lease so that no other worker takes
   * it over.
   */
  async read(key: string): Promise<Buffer | undefined> {
    if (!isUploadKey(key)) return undefined;
    return readObject(this.client, this.config, this.objectKey(key));
  }

  async delete(key: string): Promise<void> {
    await deleteObject(this.client, this.config, this.objectKey(key));
  }

  /** A write is one PutObject, which the bucket stores whole or not at all: nothing is left over. */
  async removeStaleTemporaries(): Promise<number> {
    return 0;
  }
}
