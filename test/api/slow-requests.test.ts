// A request must arrive whole within CUTOUT_REQUEST_TIMEOUT_SECONDS: a client that sends its headers
// and then its body a little at a time, or not at all, is answered 408 and its connection closed,
// instead of holding the connection (and, for an upload, its parser) for as long as it likes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { LogCollector } from '../support/log-collector.ts';
import { partialApiCreate, partialGzipApiCreate, partialUpload } from '../support/partial-requests.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from '../web/web-client.ts';

let server: TestServer;
let key: string;
const logs = new LogCollector();
before(async () => {
  server = await startTestServer({ CUTOUT_REQUEST_TIMEOUT_SECONDS: '1' }, { logger: pino({ level: 'info' }, logs.stream) });
  ({ key } = await server.account());
});
after(() => server.close());

// Without the timeout the server would wait for these bodies forever: fail instead.
const waitAtMost = { timeout: 30_000 };
const timeoutMessage = 'The request was not received in time.';

/** Sends `partial` and nothing more; what the server answers by the time it closes the connection, and when. */
function stalledRequest(partial: string): Promise<{ answer: string; afterMs: number }> {
  const { port } = new URL(server.url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(partial, 'latin1'));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ answer: Buffer.concat(chunks).toString('utf8'), afterMs: performance.now() - started }));
  });
}

/** The 408 the client got, and its one log line: at info, under the id the client was given, naming the request. */
async function assertTimedOut({ answer, afterMs }: { answer: string; afterMs: number }, url: string): Promise<void> {
  assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; request_id: string } };
  assert.equal(body.error.code, 'invalid_request');
  assert.ok(afterMs >= 900, `answered after ${Math.round(afterMs)} ms, before the timeout`);
  const requestId = body.error.request_id;
  const entry = await logs.next((e) => e.reqId === requestId && e.msg === timeoutMessage);
  assert.equal(entry.level, 30);
  assert.equal(entry.status, 408);
  assert.equal(entry.req?.url, url);
  assert.ok(logs.entries.some((e) => e.reqId === requestId && e.msg === 'incoming request'), 'the id is the one Fastify gave the request');
  // The error handler hears of the cut body too, once the socket is gone; give it that turn.
  await new Promise((resolve) => setImmediate(resolve));
  const lines = logs.entries.filter((e) => e.reqId === requestId && e.level >= 30 && e.msg !== 'incoming request' && e.msg !== 'request completed');
  assert.deepEqual(lines.map((e) => e.msg), [timeoutMessage], 'one line about it, and none saying the client closed the connection');
  assert.deepEqual(logs.entries.filter((e) => e.level >= 50), []);
}

test('a create whose JSON body stops arriving is answered 408 invalid_request and closed after the request timeout', waitAtMost, async () => {
  await assertTimedOut(await stalledRequest(partialApiCreate(key)), '/api/v1/bg/removals');
});

test('a create whose gzip body stops arriving is answered 408 invalid_request and closed after the request timeout', waitAtMost, async () => {
  await assertTimedOut(await stalledRequest(partialGzipApiCreate(key)), '/api/v1/bg/removals');
});

test('a web upload whose photo stops arriving midway is answered 408 and closed after the request timeout', waitAtMost, async () => {
  const client = new WebClient(server.url);
  await client.signUp(uniqueEmail(), goodPassword);
  await client.get('/app/remove');
  await assertTimedOut(await stalledRequest(partialUpload(client)), '/app/removals');
});

test('an upload already answered (a signed-out visitor sent to sign in) gets no second answer when its body stalls: its connection just closes', waitAtMost, async () => {
  const signedOut = new WebClient(server.url);
  await signedOut.get('/sign-in');
  const { answer } = await stalledRequest(partialUpload(signedOut));
  assert.match(answer, /^HTTP\/1\.1 303 /);
  assert.equal(answer.match(/^HTTP\/1\.1 /gm)?.length, 1, `one answer only, got:\n${answer}`);
});

test('headers that never finish are cut too (within the request timeout when it is under a minute)', waitAtMost, async () => {
  const { answer } = await stalledRequest('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
});

test('the request timeout is five minutes unless set, and at most an hour', () => {
  assert.equal(loadConfig({}).requestTimeoutMs, 300_000);
  assert.equal(loadConfig({ CUTOUT_REQUEST_TIMEOUT_SECONDS: '20' }).requestTimeoutMs, 20_000);
  for (const value of ['0', '3601', '1.5']) assert.throws(() => loadConfig({ CUTOUT_REQUEST_TIMEOUT_SECONDS: value }), /CUTOUT_REQUEST_TIMEOUT_SECONDS/);
});
