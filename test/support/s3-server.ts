// An S3-compatible server (s3rver) on an ephemeral loopback port, with one bucket. It checks
// SigV4 signatures, presigned query signatures and their expiry like S3 does.
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import type { S3Config } from '../../src/config.ts';

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** The environment that points the service at this bucket (s3rver's fixed test credentials). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'cutout-results'): Promise<S3Server> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    env: {
      CUTOUT_S3_BUCKET: bucket,
      CUTOUT_S3_ENDPOINT: endpoint,
      CUTOUT_S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The service's bucket settings for a bucket at `endpoint` (s3rver's fixed test credentials). */
export function s3ConfigFor(endpoint: string, bucket: string, { prefix = 'results/', timeoutMs = 5000 }: { prefix?: string; timeoutMs?: number } = {}): S3Config {
  return {
    bucket,
    endpoint,
    region: 'us-east-1',
    prefix,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', sessionToken: undefined },
    timeoutMs,
  };
}

/**
 * Error answers a bucket gives, and whether each is an outage of the bucket (a failure or throttling
 * that every object would meet) rather than a refusal of the one object.
 */
export const bucketErrors = [
  { status: 500, code: 'InternalError', outage: true },
  { status: 503, code: 'SlowDown', outage: true },
  { status: 429, code: 'TooManyRequests', outage: true },
  { status: 403, code: 'AccessDenied', outage: false },
] as const;

/** Answers as S3 answers an error: the status, and an XML body naming the code. */
export function answerError(response: http.ServerResponse, status: number, code: string): void {
  response.writeHead(status, { 'content-type': 'application/xml' });
  response.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
}
