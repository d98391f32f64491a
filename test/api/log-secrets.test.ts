// What the service logs must not open anything: a result URL's signature is a password to its file
// until it expires, so a request line shows the path and the names of the query parameters only.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { loadSigningSecret, ResultUrlSigner } from '../../src/storage/signed-url.ts';
import { LogCollector } from '../support/log-collector.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
const logs = new LogCollector();
before(async () => {
  server = await startTestServer({}, { logger: pino({ level: 'info' }, logs.stream) });
});
after(() => server.close());

test("a result download's request line names its path, but not the signature that opens the file", async () => {
  const signer = new ResultUrlSigner(loadSigningSecret(server.dataDir, undefined), () => server.url, 3600);
  const link = new URL(signer.sign('bgr_aaaaaaaaaaaaaaaaaaaa-1.png').url);
  const signature = link.searchParams.get('signature') ?? '';
  const res = await server.request(`${link.pathname}${link.search}`);
  assert.equal(res.status, 404, 'a valid link to a result that is not there');
  const requestId = res.headers.get('x-request-id');
  const line = await logs.next((e) => e.reqId === requestId && e.req !== undefined);
  assert.match(line.req?.url ?? '', /^\/api\/v1\/results\/bgr_aaaaaaaaaaaaaaaaaaaa-1\.png\?expires=[^&]*&signature=/);
  const logged = logs.entries.filter((e) => e.reqId === requestId).map((e) => JSON.stringify(e));
  assert.ok(logged.length >= 2, 'the request line and the refusal');
  for (const entry of logged) assert.ok(!entry.includes(signature), entry);
});
