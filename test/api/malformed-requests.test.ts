// Requests that no route can take as they are: paths the router cannot decode, ids that cannot
// name anything, query strings and header blocks a client mangled, bodies in a coding the server
// does not read. Each still gets the Error body with a request id, and the checks keep their order
// (API key first).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

interface ApiErrorBody {
  error: { code: string; message: string; request_id: string };
}

async function expectError(res: Response, status: number, code: string): Promise<ApiErrorBody['error']> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  const body = JSON.parse(text) as ApiErrorBody;
  assert.equal(body.error.code, code, text);
  assert.match(body.error.request_id, /^req_/);
  assert.equal(body.error.request_id, res.headers.get('x-request-id'));
  return body.error;
}

/** Sends bytes as they are, for requests no well-behaved client would send, and reads the whole answer. */
function rawRequest(server: TestServer, text: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.end(text, 'latin1'));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

/**
 * Sends the start of a chunked create body and never its end, and reads the answer: one that comes
 * was decided while the body was still arriving.
 */
function unfinishedCreate(server: TestServer, key: string, contentEncoding: string, start: Buffer): Promise<{ status: number; body: string }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/v1/bg/removals',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': contentEncoding, 'transfer-encoding': 'chunked' },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.write(start);
  });
}

describeEachEngine('requests no route can take as they are', (engine) => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await startTestServer({}, { engine });
    ({ key } = await server.account());
  });
  after(() => server.close());

  describe('task ids and result URLs that cannot name anything', () => {
    const unnameableIds = [
      ['malformed percent-encoding', '%E0%A4%A'],
      ['an encoded lone surrogate', '%ED%A0%80'],
      ['101 characters', `bgr_${'a'.repeat(97)}`],
      ['2000 characters', `bgr_${'a'.repeat(1996)}`],
      ['a NUL character', '%00'],
      ['a NUL character after the prefix', 'bgr_%00aaaaaaaaaaaaaaaaaaa'],
      ['a control character', 'bgr_%01'],
      ['a non-ASCII character', 'bgr_%C3%A9'],
      ['upper case', 'BGR_AAAAAAAAAAAAAAAAAAAA'],
    ] as const;

    for (const [label, id] of unnameableIds) {
      test(`a task id with ${label} gets 401 without a key and 404 task_not_found with one`, async () => {
        await expectError(await server.request(`/api/v1/bg/removals/${id}`), 401, 'invalid_api_key');
        const res = await server.request(`/api/v1/bg/removals/${id}`, { key });
        await expectError(res, 404, 'task_not_found');
        assert.ok(res.headers.get('x-ratelimit-remaining'), 'the request counted against the rate limit');
      });
    }

    test('a task id with malformed percent-encoding still gets 403 api_access_required for a key without API access', async () => {
      const free = await server.account({ plan: 'free', credits: 0 });
      await expectError(await server.request('/api/v1/bg/removals/%E0%A4%A', { key: free.key }), 403, 'api_access_required');
    });

    test('a result URL with malformed percent-encoding gets 403 result_url_invalid', async () => {
      await expectError(await server.request('/api/v1/results/%E0%A4%A?expires=1&signature=abc'), 403, 'result_url_invalid');
    });

    test('a result URL with a NUL or a control character in its key gets 403 result_url_invalid', async () => {
      await expectError(await server.request('/api/v1/results/%00?expires=1&signature=abc'), 403, 'result_url_invalid');
      await expectError(await server.request('/api/v1/results/bgr_%01.png?expires=%00&signature=%00'), 403, 'result_url_invalid');
    });

    test('a result URL with a key longer than any key gets 403 result_url_invalid', async () => {
      await expectError(await server.request(`/api/v1/results/bgr_${'a'.repeat(200)}.png?expires=1&signature=abc`), 403, 'result_url_invalid');
    });

    test('a result URL with a repeated query parameter gets 403 result_url_invalid', async () => {
      await expectError(await server.request('/api/v1/results/bgr_aaaaaaaaaaaaaaaaaaaa.png?expires=1&expires=2&signature=abc'), 403, 'result_url_invalid');
      await expectError(await server.request('/api/v1/results/bgr_aaaaaaaaaaaaaaaaaaaa.png?expires=1&signature=a&signature=b'), 403, 'result_url_invalid');
    });

    test('any other path with malformed percent-encoding gets 400 invalid_request', async () => {
      const error = await expectError(await server.request('/api/v1/nothing/%E0%A4%A', { key }), 400, 'invalid_request');
      assert.match(error.message, /percent-encod/);
    });
  });

  describe('requests the HTTP parser refuses', () => {
    async function expectRawError(text: string, status: number): Promise<string> {
      const res = await rawRequest(server, text);
      assert.equal(res.status, status, res.body);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const body = JSON.parse(res.body) as ApiErrorBody;
      assert.equal(body.error.code, 'invalid_request');
      assert.match(body.error.request_id, /^req_/);
      assert.equal(body.error.request_id, res.headers.get('x-request-id'));
      return body.error.message;
    }

    test('a header block over 16 KB gets 431 with the Error body and a request id', async () => {
      const message = await expectRawError(`GET /api/v1/bg/removals/x HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431);
      assert.match(message, /header/i);
    });

    test('a control character in a header gets 400 with the Error body and a request id', async () => {
      await expectRawError(`GET /api/v1/bg/removals/x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer \x01abc\r\n\r\n`, 400);
    });

    test('a NUL in the Idempotency-Key header gets 400 with the Error body, never reaching the database', async () => {
      const body = JSON.stringify({ image_url: 'https://images.example.test/photo.jpg' });
      await expectRawError(
        `POST /api/v1/bg/removals HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          `Idempotency-Key: a\x00b\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        400,
      );
    });

    test('two Content-Length headers get 400 with the Error body and a request id', async () => {
      await expectRawError(
        `POST /api/v1/bg/removals HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{"a":1}`,
        400,
      );
    });

    test('an Expect other than 100-continue gets 417 with the Error body and a request id', async () => {
      const body = JSON.stringify({ image_url: 'https://images.example.test/photo.jpg' });
      const message = await expectRawError(
        `POST /api/v1/bg/removals HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          `Expect: 200-ok\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        417,
      );
      assert.match(message, /Expect/);
    });

    test('a CONNECT request gets 400 with the Error body and a request id, not a closed connection', async () => {
      const message = await expectRawError('CONNECT images.example.test:443 HTTP/1.1\r\nHost: images.example.test:443\r\n\r\n', 400);
      assert.match(message, /CONNECT/);
    });

    test('chunk extensions over the parser limit get 413 with the Error body and a request id', async () => {
      const body = '{"a":1}';
      const message = await expectRawError(
        `POST /api/v1/bg/removals HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `${body.length.toString(16)};x=${'a'.repeat(20_000)}\r\n${body}\r\n0\r\n\r\n`,
        413,
      );
      assert.match(message, /chunk extensions/);
    });
  });

  test('a body over 64 KB gets 400 invalid_request, after the API key check', async () => {
    const body = JSON.stringify({ image_url: `https://images.example.test/${'a'.repeat(70_000)}` });
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
    await expectError(await server.request('/api/v1/bg/removals', init), 401, 'invalid_api_key');
    const error = await expectError(await server.request('/api/v1/bg/removals', { ...init, key }), 400, 'invalid_request');
    assert.match(error.message, /too large/);
  });

  describe('request bodies sent compressed', () => {
    const imageUrl = 'https://images.example.test/photo.jpg';
    const json = Buffer.from(JSON.stringify({ image_url: imageUrl }));
    const compressors = { gzip: zlib.gzipSync, 'x-gzip': zlib.gzipSync, deflate: zlib.deflateSync, br: zlib.brotliCompressSync };
    let compressedKey: string;
    before(async () => {
      ({ key: compressedKey } = await server.account({ credits: 1000 }));
    });

    function create(contentEncoding: string, body: Uint8Array<ArrayBuffer>, withKey = true): Promise<Response> {
      const headers = { 'content-type': 'application/json', 'content-encoding': contentEncoding };
      return server.request('/api/v1/bg/removals', { method: 'POST', headers, body, ...(withKey ? { key: compressedKey } : {}) });
    }

    for (const [coding, compress] of Object.entries(compressors)) {
      test(`a create whose body is ${coding} encoded is accepted like the plain one`, async () => {
        const res = await create(coding, compress(json));
        const text = await res.text();
        assert.equal(res.status, 202, text);
        assert.equal((JSON.parse(text) as { input: { image_url: string } }).input.image_url, imageUrl);
      });
    }

    test('a create whose body says Content-Encoding: identity is accepted like the plain one', async () => {
      const res = await create('identity', json);
      assert.equal(res.status, 202, await res.text());
    });

    test('a gzip body that inflates past the body limit gets 400 too large, like a plain body, before it is all inflated', { timeout: 30_000 }, async () => {
      // 200 KB of JSON whitespace in gzip, less the trailer: the body is never finished.
      const inflatesPastTheLimit = zlib.gzipSync(Buffer.alloc(200_000, ' ')).subarray(0, -8);
      const res = await unfinishedCreate(server, compressedKey, 'gzip', inflatesPastTheLimit);
      assert.equal(res.status, 400, res.body);
      assert.match(res.body, /"code":"invalid_request".*too large/);
    });

    test('a gzip body over the body limit as sent gets 400 too large even while it inflates to nothing', { timeout: 30_000 }, async () => {
      // A gzip header, then empty stored blocks: 75 KB on the wire that decode to no byte at all.
      const emptyBlocks = Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), Buffer.alloc(15_000 * 5).fill(Buffer.from([0, 0, 0, 0xff, 0xff]))]);
      const res = await unfinishedCreate(server, compressedKey, 'gzip', emptyBlocks);
      assert.equal(res.status, 400, res.body);
      assert.match(res.body, /"code":"invalid_request".*too large/);
    });

    for (const coding of ['gzip', 'deflate', 'br']) {
      test(`a body that is not valid ${coding} data gets 400 invalid_request saying so`, async () => {
        const error = await expectError(await create(coding, json), 400, 'invalid_request');
        assert.match(error.message, new RegExp(`not valid ${coding === 'br' ? 'Brotli' : coding}`));
      });
    }

    for (const [coding, compress] of Object.entries(compressors)) {
      for (const [label, after] of [['junk', Buffer.from('junk')], ['zero bytes', Buffer.alloc(4)]] as const) {
        test(`a ${coding} body with ${label} after the end of its stream gets 400 invalid_request, not the stream with the rest dropped`, async () => {
          const error = await expectError(await create(coding, Buffer.concat([compress(json), after])), 400, 'invalid_request');
          assert.match(error.message, new RegExp(`not valid ${coding === 'br' ? 'Brotli' : coding.replace('x-', '')}`));
        });
      }
    }

    for (const coding of ['compress', 'zstd', 'gzip, br']) {
      test(`a body in an unsupported coding (${coding}) gets 415 invalid_request with Accept-Encoding, after the API key check`, async () => {
        const body = zlib.gzipSync(json);
        await expectError(await create(coding, body, false), 401, 'invalid_api_key');
        const res = await create(coding, body);
        const error = await expectError(res, 415, 'invalid_request');
        assert.match(error.message, /Content-Encoding/);
        assert.equal(res.headers.get('accept-encoding'), 'gzip, x-gzip, deflate, br');
      });
    }
  });
});
