// Writing to the bucket (a web upload, a worker's result): a bucket that takes the request and never
// answers, or stops reading its body halfway, fails the write as an outage of the storage within
// CUTOUT_S3_TIMEOUT_SECONDS, not after each of the SDK's attempts has had that long; and which
// answers count as the bucket's failure rather than a refusal of the one object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StoreUnavailableError } from '../../src/domain/errors.ts';
import { resultKey } from '../../src/storage/result-store.ts';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
import { S3UploadStore } from '../../src/storage/s3-upload-store.ts';
import { newUploadKey } from '../../src/storage/upload-store.ts';
import { answerError, bucketErrors, s3ConfigFor } from '../support/s3-server.ts';

// Long enough that the 2.5 timeouts a write may take leave a loaded machine room, and short of the
// three attempts (3 timeouts) that one write took without its deadline.
const timeoutMs = 2000;

/** Both stores on a bucket that handles every request with `handle`; closed by the returned function. */
async function storesAnswering(handle: http.RequestListener, timeout = timeoutMs) {
  const server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const config = s3ConfigFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'elsewhere', { timeoutMs: timeout });
  const results = new S3ResultStore(config, 900);
  return {
    writes: {
      'a web upload': (data: Buffer) => new S3UploadStore(results.client, config).put(newUploadKey(), data),
      "a worker's result": (data: Buffer) => results.put(resultKey('bgr_writes', 1, 'png'), data),
    },
    async close() {
      results.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const hangs = {
  // Reads the whole body, then says nothing.
  'takes the request and never answers': { handle: (request: http.IncomingMessage) => void request.resume(), size: 1000 },
  // Never reads the body, so that the sender stops once the socket's buffers are full.
  'stops reading the body halfway': { handle: () => undefined, size: 32 * 1024 * 1024 },
};

for (const [hang, { handle, size }] of Object.entries(hangs)) {
  test(`a write to a bucket that ${hang} fails as an outage of the storage at the store timeout`, { timeout: 30_000 }, async () => {
    const bucket = await storesAnswering(handle);
    try {
      for (const [what, write] of Object.entries(bucket.writes)) {
        const started = Date.now();
        await assert.rejects(write(Buffer.alloc(size)), (err: Error) => err instanceof StoreUnavailableError, what);
        const elapsed = Date.now() - started;
        assert.ok(elapsed >= timeoutMs - 100 && elapsed < 2.5 * timeoutMs, `${what} failed after ${elapsed} ms`);
      }
    } finally {
      await bucket.close();
    }
  });
}

test('a write that the bucket fails (500) or throttles (503, 429) is an outage of the storage; a refusal (403) is not', async () => {
  for (const { status, code, outage } of bucketErrors) {
    const bucket = await storesAnswering((request, response) => {
      request.resume();
      answerError(response, status, code);
    }, 5000);
    try {
      for (const [what, write] of Object.entries(bucket.writes)) {
        await assert.rejects(write(Buffer.from('image')), (err: Error) => err instanceof StoreUnavailableError === outage, `${what}: ${status} ${code}`);
      }
    } finally {
      await bucket.close();
    }
  }
});

test('a large write that a slow but steady bucket takes for longer than the store timeout succeeds: the deadline grows with the body', { timeout: 30_000 }, async () => {
  // 97 MiB taken at 48 MiB/s: some 2 s against a 1 s timeout, which four 32 MiB parts begun make 4 s.
  // The bucket paces itself by the clock (each chunk is let in when the bytes so far are due), so a
  // busy machine's late timers are made up for, not added up: pausing for a fixed time per chunk,
  // this failed at 4.05 s with another test file and a busy loop sharing the two cores.
  const bytesPerMs = (48 << 20) / 1000;
  const bucket = await storesAnswering((request, response) => {
    const started = Date.now();
    let received = 0;
    request.on('data', (chunk: Buffer) => {
      received += chunk.length;
      const wait = started + received / bytesPerMs - Date.now();
      if (wait <= 0) return;
      request.pause();
      setTimeout(() => request.resume(), wait);
    });
    request.on('end', () => response.writeHead(200, { etag: '"steady"' }).end());
  }, 1000);
  try {
    for (const [what, write] of Object.entries(bucket.writes)) {
      const started = Date.now();
      await write(Buffer.alloc(97 << 20));
      assert.ok(Date.now() - started > 1000, `${what} took longer than the timeout to be taken`);
    }
  } finally {
    await bucket.close();
  }
});
