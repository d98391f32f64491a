// Reading a web upload back from the bucket (the worker reads a web task's image this way, the web
// app shows it to its owner): its bytes, nothing for an upload that is not there (whatever name the
// server gives the 404), and an outage of the storage, in CUTOUT_S3_TIMEOUT_SECONDS at most, for a
// bucket that stops sending halfway through; and which failures of a read or a delete count as the
// bucket's rather than the one object's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { S3Config } from '../../src/config.ts';
import { StoreUnavailableError } from '../../src/domain/errors.ts';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
import { S3UploadStore } from '../../src/storage/s3-upload-store.ts';
import { newUploadKey } from '../../src/storage/upload-store.ts';
import { answerError, bucketErrors, s3ConfigFor, startS3Server, type S3Server } from '../support/s3-server.ts';

const configFor = (endpoint: string, bucket: string, timeoutMs?: number): S3Config => s3ConfigFor(endpoint, bucket, { timeoutMs });

/** An upload store on a bucket that answers every request with `answer`; closed by the returned function. */
async function uploadsAnswering(answer: http.RequestListener, timeoutMs: number): Promise<{ uploads: S3UploadStore; close(): Promise<void> }> {
  const server = http.createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const config = configFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'elsewhere', timeoutMs);
  const results = new S3ResultStore(config, 900);
  return {
    uploads: new S3UploadStore(results.client, config),
    async close() {
      results.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let s3: S3Server;
let results: S3ResultStore;
let uploads: S3UploadStore;
before(async () => {
  s3 = await startS3Server();
  const config = configFor(s3.endpoint, s3.bucket);
  results = new S3ResultStore(config, 900);
  uploads = new S3UploadStore(results.client, config);
});
after(async () => {
  results.close();
  await s3.close();
});

test('an upload is read back whole', async () => {
  const key = newUploadKey();
  const data = randomBytes(300_000);
  await uploads.put(key, data);
  assert.ok((await uploads.read(key))?.equals(data));
});

test('an upload that is not in the bucket reads as nothing, also from a server that names its 404 otherwise', async () => {
  assert.equal(await uploads.read(newUploadKey()), undefined);
  const other = await uploadsAnswering((_request, response) => {
    response.writeHead(404, { 'content-type': 'application/xml' });
    response.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotFound</Code><Message>Not Found</Message></Error>');
  }, 5000);
  try {
    assert.equal(await other.uploads.read(newUploadKey()), undefined);
  } finally {
    await other.close();
  }
});

test('a bucket that does not exist is a failure, not a missing upload', async () => {
  const elsewhere = new S3UploadStore(results.client, configFor(s3.endpoint, 'no-such-bucket'));
  await assert.rejects(elsewhere.read(newUploadKey()), (err: Error) => err.name === 'NoSuchBucket');
});

test('a bucket that sends the headers and then stalls mid-body fails the read at the store timeout', { timeout: 10_000 }, async () => {
  const stalling = await uploadsAnswering((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '100000' });
    response.write(Buffer.alloc(1000));
  }, 1000);
  try {
    const started = Date.now();
    await assert.rejects(stalling.uploads.read(newUploadKey()), (err: Error) => err instanceof StoreUnavailableError && /did not send the object within 1000 ms/.test(err.message));
    const elapsed = Date.now() - started;
    // Without the deadline the read never ends; the upper bound leaves a loaded machine room.
    assert.ok(elapsed >= 900 && elapsed < 5000, `failed after ${elapsed} ms`);
  } finally {
    await stalling.close();
  }
});

test('a read that the bucket fails (500), throttles (503, 429) or breaks off mid-body is an outage of the storage; a refusal (403) is not', async () => {
  for (const { status, code, outage } of bucketErrors) {
    const bucket = await uploadsAnswering((_request, response) => answerError(response, status, code), 5000);
    try {
      await assert.rejects(bucket.uploads.read(newUploadKey()), (err: Error) => err instanceof StoreUnavailableError === outage, `${status} ${code}`);
    } finally {
      await bucket.close();
    }
  }
  // The connection lost a thousand bytes into the object (ECONNRESET, like a database's socket).
  const cut = await uploadsAnswering((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '100000' });
    response.write(Buffer.alloc(1000), () => response.socket?.destroy());
  }, 5000);
  try {
    await assert.rejects(cut.uploads.read(newUploadKey()), (err: Error) => err instanceof StoreUnavailableError, 'cut off mid-body');
  } finally {
    await cut.close();
  }
});

test('a delete that the bucket throttles, with 429 as with 503, is an outage of the bucket; a refusal of the one object is not', async () => {
  const answering = (status: number, code: string) =>
    uploadsAnswering((_request, response) => {
      response.writeHead(status, { 'content-type': 'application/xml' });
      response.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
    }, 5000);
  for (const [status, code] of [
    [429, 'TooManyRequests'],
    [503, 'SlowDown'],
  ] as const) {
    const throttling = await answering(status, code);
    try {
      await assert.rejects(throttling.uploads.delete(newUploadKey()), (err: Error) => err instanceof StoreUnavailableError, `${status} ${code}`);
    } finally {
      await throttling.close();
    }
  }
  const refusing = await answering(403, 'AccessDenied');
  try {
    await assert.rejects(refusing.uploads.delete(newUploadKey()), (err: Error) => !(err instanceof StoreUnavailableError) && err.name === 'AccessDenied');
  } finally {
    await refusing.close();
  }
});

test('a large upload that a slow but steady bucket sends for longer than the store timeout is read whole: the deadline grows with the object', { timeout: 30_000 }, async () => {
  // 97 MiB at about 40 MiB/s: some 2.4 s against a 1 s timeout, which four 32 MiB parts begun make 4 s.
  const size = 97 << 20;
  const piece = Buffer.alloc(1 << 20, 7);
  const steady = await uploadsAnswering((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
    let sent = 0;
    const next = () => {
      if (sent === size) return void response.end();
      sent += piece.length;
      response.write(piece, () => setTimeout(next, 25));
    };
    next();
  }, 1000);
  try {
    const started = Date.now();
    const read = await steady.uploads.read(newUploadKey());
    assert.equal(read?.length, size);
    assert.ok(Date.now() - started > 1000, 'the object took longer than the timeout to arrive');
  } finally {
    await steady.close();
  }
});
