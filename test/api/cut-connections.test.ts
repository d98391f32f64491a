// A client that goes away while its request body is on the way (a closed laptop, a killed script)
// is the client's doing: the server logs it as a refusal, never as an unhandled error that would
// page an operator, and goes on serving.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import pino from 'pino';
import { LogCollector } from '../support/log-collector.ts';
import { partialApiCreate, partialGzipApiCreate, partialUpload } from '../support/partial-requests.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from '../web/web-client.ts';

const closedMessage = 'The client closed the connection before the request body arrived.';

let server: TestServer;
let key: string;
const logs = new LogCollector();
before(async () => {
  server = await startTestServer({}, { logger: pino({ level: 'info' }, logs.stream) });
  ({ key } = await server.account());
});
after(() => server.close());

/** Sends a request's head and part of its body, then cuts the connection as `cut` says. */
function cutRequest(partial: string, cut: (socket: net.Socket) => void): void {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(partial, 'latin1', () => cut(socket)));
  socket.on('error', () => {});
  socket.resume();
}

/** The web app's upload form, signed in, cut a few KB into a photo announced at 100 KB. */
async function webUpload(): Promise<string> {
  const client = new WebClient(server.url);
  await client.signUp(uniqueEmail(), goodPassword);
  await client.get('/app/remove');
  return partialUpload(client);
}

const cuts = [
  ['closes its end of the connection', (socket: net.Socket) => socket.end()],
  ['resets the connection', (socket: net.Socket) => socket.resetAndDestroy()],
] as const;

for (const [route, partial] of [
  ['an API create', async () => partialApiCreate(key)],
  ['a gzip-encoded API create', async () => partialGzipApiCreate(key)],
  ["the web app's upload form", webUpload],
] as const) {
  for (const [how, cut] of cuts) {
    test(`a client that ${how} halfway through ${route} is logged at info as a refusal, not as an unhandled error`, async () => {
      const request = await partial();
      const from = logs.entries.length;
      cutRequest(request, cut);
      // Whichever the server logs about it first: the refusal, or an error.
      const entry = await logs.next((e) => logs.entries.indexOf(e) >= from && (e.msg === closedMessage || e.level >= 50));
      assert.equal(entry.msg, closedMessage);
      assert.equal(entry.level, 30);
      const res = await server.request('/api/v1/bg/removals', { key, ...createBody({ image_url: 'http://127.0.0.1:9/photo.jpg' }) });
      assert.equal(res.status, 202, 'the server goes on serving');
      const errors = logs.entries.slice(from).filter((e) => e.level >= 50);
      assert.deepEqual(errors, [], 'nothing is logged as an error');
    });
  }
}
