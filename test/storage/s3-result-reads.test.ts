// Reading a result back from the bucket (for the history list's thumbnails): its length and body,
// nothing for an object that is not there, and an error, in CUTOUT_S3_TIMEOUT_SECONDS at most,
// for a bucket that fails, even one that stops sending halfway through the body.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { S3Config } from '../../src/config.ts';
import type { OpenResult } from '../../src/storage/result-store.ts';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
import { s3ConfigFor, startS3Server, type S3Server } from '../support/s3-server.ts';

const key = 'bgr_abc123-1.png';

const configFor = (endpoint: string, bucket: string, timeoutMs?: number): S3Config => s3ConfigFor(endpoint, bucket, { timeoutMs });

async function readAll(file: OpenResult): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of file.read()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

let s3: S3Server;
let store: S3ResultStore;
before(async () => {
  s3 = await startS3Server();
  store = new S3ResultStore(configFor(s3.endpoint, s3.bucket), 900);
});
after(async () => {
  store.close();
  await s3.close();
});

test('an object is opened with its length and read whole from its body', async () => {
  const data = randomBytes(300_000);
  await store.put(key, data);
  const file = await store.open(key);
  assert.ok(file);
  assert.equal(file.size, data.length);
  assert.ok((await readAll(file)).equals(data));
});

test('an object opened and closed unread releases its connection', async () => {
  await store.put(key, randomBytes(1_000_000));
  const file = await store.open(key);
  assert.ok(file);
  await file.close();
  assert.equal(file.read().destroyed, true);
});

test('an object that is not in the bucket opens as nothing; a key that is no result key is not asked for', async () => {
  assert.equal(await store.open('bgr_missing-1.png'), undefined);
  assert.equal(await store.open('../uploads/x'), undefined);
});

test('a bucket that does not exist is a failure, not a missing result', async () => {
  const elsewhere = new S3ResultStore(configFor(s3.endpoint, 'no-such-bucket'), 900);
  try {
    await assert.rejects(elsewhere.open(key), (err: Error) => err.name === 'NoSuchBucket');
  } finally {
    elsewhere.close();
  }
});

test('a bucket that sends the headers and then stalls mid-body fails the read at the store timeout', { timeout: 10_000 }, async () => {
  // Answers every request with a body it never finishes.
  const stalling = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'image/png', 'content-length': '100000' });
    response.write(Buffer.alloc(1000));
  });
  await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
  const port = (stalling.address() as AddressInfo).port;
  const slow = new S3ResultStore(configFor(`http://127.0.0.1:${port}`, 'stalls', 1000), 900);
  try {
    const started = Date.now();
    const file = await slow.open(key);
    assert.ok(file);
    assert.equal(file.size, 100_000);
    await assert.rejects(readAll(file), /did not send the object within 1000 ms/);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 900 && elapsed < 2000, `failed after ${elapsed} ms`);
  } finally {
    slow.close();
    stalling.closeAllConnections();
    await new Promise((resolve) => stalling.close(resolve));
  }
});
