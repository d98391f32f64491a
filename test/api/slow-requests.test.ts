// A request must arrive whole within CUTOUT_REQUEST_TIMEOUT_SECONDS: a client that sends its headers
// and then its body a little at a time, or not at all, is answered 408 and its connection closed,
// instead of holding the connection (and, for an upload, its parser) for as long as it likes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { loadConfig } from '../../src/config.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from '../web/web-client.ts';

let server: TestServer;
let key: string;
before(async () => {
  server = await startTestServer({ CUTOUT_REQUEST_TIMEOUT_SECONDS: '1' });
  ({ key } = await server.account());
});
after(() => server.close());

// Without the timeout the server would wait for these bodies forever: fail instead.
const waitAtMost = { timeout: 30_000 };

/** Sends `partial` and nothing more; what the server answers by the time it closes the connection, and when. */
function stalledRequest(partial: string): Promise<{ answer: string; afterMs: number }> {
  const { port } = new URL(server.url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(partial));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ answer: Buffer.concat(chunks).toString('utf8'), afterMs: performance.now() - started }));
  });
}

function assertTimedOut({ answer, afterMs }: { answer: string; afterMs: number }): void {
  assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; request_id: string } };
  assert.equal(body.error.code, 'invalid_request');
  assert.match(body.error.request_id, /^req_/);
  assert.ok(afterMs >= 900, `answered after ${Math.round(afterMs)} ms, before the timeout`);
}

test('a create whose JSON body stops arriving is answered 408 invalid_request and closed after the request timeout', waitAtMost, async () => {
  assertTimedOut(
    await stalledRequest(
      `POST /api/v1/bg/removals HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"image_url":',
    ),
  );
});

test('a web upload whose photo stops arriving midway is answered 408 and closed after the request timeout', waitAtMost, async () => {
  const client = new WebClient(server.url);
  await client.signUp(uniqueEmail(), goodPassword);
  await client.get('/app/remove');
  const boundary = '----slow';
  assertTimedOut(
    await stalledRequest(
      `POST /app/removals HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${client.cookieHeader()}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${client.csrf}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="photo.png"\r\nContent-Type: image/png\r\n\r\n${'x'.repeat(2000)}`,
    ),
  );
});

test('headers that never finish are cut by the same timeout', waitAtMost, async () => {
  assertTimedOut(await stalledRequest('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
});

test('the request timeout is five minutes unless set, and at most an hour', () => {
  assert.equal(loadConfig({}).requestTimeoutMs, 300_000);
  assert.equal(loadConfig({ CUTOUT_REQUEST_TIMEOUT_SECONDS: '20' }).requestTimeoutMs, 20_000);
  for (const value of ['0', '3601', '1.5']) assert.throws(() => loadConfig({ CUTOUT_REQUEST_TIMEOUT_SECONDS: value }), /CUTOUT_REQUEST_TIMEOUT_SECONDS/);
});
