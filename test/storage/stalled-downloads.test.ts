// A download whose client stops reading is closed once nothing has moved on its connection for the
// request timeout, and its file is closed with it: otherwise each such client would hold a connection
// and a file descriptor for as long as it liked.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { DiskResultStore } from '../../src/storage/disk-result-store.ts';
import { loadSigningSecret, ResultUrlSigner } from '../../src/storage/signed-url.ts';
import { openDescriptorsOnResult } from '../support/open-descriptors.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
const key = 'bgr_downloadsstalled001-1.png';
let url: URL;

before(async () => {
  server = await startTestServer({ CUTOUT_REQUEST_TIMEOUT_SECONDS: '1' });
  // Far more than the connection's buffers hold, so a client that stops reading stalls the stream.
  await new DiskResultStore(path.join(server.dataDir, 'results')).put(key, Buffer.alloc(64 << 20, 7));
  url = new URL(new ResultUrlSigner(loadSigningSecret(server.dataDir, undefined), () => server.url, 600).sign(key, Date.now()).url);
});
after(() => server.close());

test('a download its client stops reading is closed after the request timeout, and so is its file', { timeout: 30_000 }, async () => {
  const serverSide = new Promise<net.Socket>((resolve) => server.app.server.once('connection', resolve));
  const client = net.connect(Number(url.port), '127.0.0.1', () => client.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
  client.on('error', () => {});
  const firstBytes = await new Promise<string>((resolve) => client.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1', 0, 12))));
  client.pause();
  assert.equal(firstBytes, 'HTTP/1.1 200');
  const socket = await serverSide;
  const started = performance.now();
  if (!socket.destroyed) await new Promise((resolve) => socket.once('close', resolve));
  assert.ok(performance.now() - started >= 500, 'closed before the timeout');
  // The stream closes its file as the response is torn down; wait for that turn of the loop.
  for (let turns = 0; turns < 100 && (await openDescriptorsOnResult(key)) > 0; turns++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await openDescriptorsOnResult(key), 0);
  client.destroy();
});
