// What the service logs must not open anything: a result URL's signature is a password to its file
// until it expires, so a request line shows the path and the names of the query parameters only;
// a bucket's refusal is logged with its code, without the signing material S3 echoes back in it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { withLogSerializers } from '../../src/logger.ts';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
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

/** What S3 answers a request signed with the wrong secret key: it echoes what it was sent. */
const signatureDoesNotMatch = (accessKeyId: string, sessionToken: string) => `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message>
<AWSAccessKeyId>${accessKeyId}</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256
20260101T000000Z
20260101/us-east-1/s3/aws4_request
5f3a</StringToSign><SignatureProvided>8c1e0b7d</SignatureProvided><StringToSignBytes>41 57 53 34</StringToSignBytes>
<CanonicalRequest>PUT
/cutout-results/bgr_aaaaaaaaaaaaaaaaaaaa-1.png

host:127.0.0.1
x-amz-security-token:${sessionToken}
</CanonicalRequest><CanonicalRequestBytes>50 55 54</CanonicalRequestBytes><RequestId>4442587FB7D0A2F9</RequestId></Error>`;

test("a bucket's refusal is logged with its code and status, without the key id, session token or signature it echoes", async () => {
  const accessKeyId = 'AKIAIOSFODNN7EXAMPLE';
  const sessionToken = 'FwoGZXIvYXdzEXAMPLEsessiontoken';
  const bucket = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(403, { 'content-type': 'application/xml' }).end(signatureDoesNotMatch(accessKeyId, sessionToken)));
  });
  await new Promise<void>((resolve) => bucket.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(bucket.address() as AddressInfo).port}`;
  const store = new S3ResultStore(
    { bucket: 'cutout-results', endpoint, region: 'us-east-1', prefix: '', forcePathStyle: true, timeoutMs: 5000, credentials: { accessKeyId, secretAccessKey: 'wrong-secret', sessionToken } },
    3600,
  );
  const bucketLog = new LogCollector();
  try {
    const refusal = await store.put('bgr_aaaaaaaaaaaaaaaaaaaa-1.png', Buffer.from('png')).then(
      () => assert.fail('the bucket refused the upload'),
      (err: unknown) => err,
    );
    withLogSerializers(pino(bucketLog.stream)).warn({ err: refusal }, 'storing the result failed; retrying');
    const line = await bucketLog.next((e) => e.msg === 'storing the result failed; retrying');
    const err = (line as unknown as { err: { Code?: string; $metadata?: { httpStatusCode?: number } } }).err;
    assert.equal(err.Code, 'SignatureDoesNotMatch');
    assert.equal(err.$metadata?.httpStatusCode, 403);
    const text = JSON.stringify(line);
    for (const secret of [accessKeyId, sessionToken, '8c1e0b7d', 'aws4_request']) assert.ok(!text.includes(secret), `${secret} in ${text}`);
  } finally {
    store.close();
    bucket.close();
  }
});

test('a thrown value that is not an error is logged as pino logs it: not changed, and a cycle in it is no crash', async () => {
  const thrown: Record<string, unknown> = { reason: 'not an Error', AWSAccessKeyId: 'kept: the caller owns this object' };
  thrown.self = thrown;
  const log = new LogCollector();
  withLogSerializers(pino(log.stream)).error({ err: thrown }, 'a rejection with a plain object');
  const line = await log.next((e) => e.msg === 'a rejection with a plain object');
  assert.deepEqual((line as unknown as { err: unknown }).err, { reason: 'not an Error', AWSAccessKeyId: 'kept: the caller owns this object', self: '[Circular]' });
  assert.equal(thrown.AWSAccessKeyId, 'kept: the caller owns this object');
});
