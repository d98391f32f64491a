// Browser uploads in the results bucket, under `uploads/` beside the results, so that a worker on
// any machine can read the image a web task was created from.
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { S3Config } from '../config.ts';
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

  async put(key: string, data: Buffer): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key), Body: data, ContentType: 'application/octet-stream', ContentLength: data.length }),
    );
  }

  async read(key: string): Promise<Buffer | undefined> {
    if (!isUploadKey(key)) return undefined;
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) }));
      return object.Body ? Buffer.from(await object.Body.transformToByteArray()) : undefined;
    } catch (err) {
      if (err instanceof NoSuchKey) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) }));
  }
}
