// A server may compress the image although the download asks for identity (a bucket object stored
// with Content-Encoding: gzip is served that way to everyone). The image must come back decoded,
// and the byte cap must hold for what the body expands to.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import zlib from 'node:zlib';
import { TaskError } from '../../src/domain/errors.ts';
import { fetchImage, type FetchOptions } from '../../src/fetch/safe-fetch.ts';
import { startLoopbackServer, type LoopbackServer } from './loopback-server.ts';

const image = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 254, 255]);
const maxBytes = 1024 * 1024;
// 64 MiB of zeros, squeezed into 65 KB (gzip) or a few hundred bytes (brotli): 64 times the cap once expanded.
const bombSize = 64 * 1024 * 1024;

let server: LoopbackServer;

function options(overrides: Partial<FetchOptions> = {}): FetchOptions {
  return { maxBytes, timeoutMs: 10_000, maxRedirects: 5, allowPrivateAddresses: false, isAllowedAddress: (ip) => ip === '127.0.0.1', resolve: () => Promise.reject(new Error('test: unexpected DNS lookup')), ...overrides };
}

function failsWith(code: string, message: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  };
}

function encoded(encoding: string, body: Buffer) {
  return (_req: http.IncomingMessage, res: http.ServerResponse) => void res.writeHead(200, { 'content-type': 'image/png', 'content-encoding': encoding }).end(body);
}

before(async () => {
  const zeros = Buffer.alloc(bombSize);
  server = await startLoopbackServer({
    '/gzip': encoded('gzip', zlib.gzipSync(image)),
    '/x-gzip': encoded('x-gzip', zlib.gzipSync(image)),
    '/deflate': encoded('deflate', zlib.deflateSync(image)),
    '/raw-deflate': encoded('deflate', zlib.deflateRawSync(image)),
    '/br': encoded('BR', zlib.brotliCompressSync(image)),
    '/identity': encoded('identity', image),
    '/gzip-bomb': encoded('gzip', zlib.gzipSync(zeros, { level: 9 })),
    '/br-bomb': encoded('br', zlib.brotliCompressSync(zeros, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } })),
    '/corrupt-gzip': encoded('gzip', Buffer.concat([zlib.gzipSync(image).subarray(0, 12), Buffer.from('garbage')])),
    // Bytes after the end of the gzip data, as some servers send (a stray newline, a half-written
    // second member): browsers show the image and ignore them.
    '/gzip-then-junk': encoded('gzip', Buffer.concat([zlib.gzipSync(image), Buffer.from('\n \n\n')])),
    '/gzip-then-half-member': encoded('gzip', Buffer.concat([zlib.gzipSync(image), zlib.gzipSync(image).subarray(0, 4)])),
    '/gzip-two-members': encoded('gzip', Buffer.concat([zlib.gzipSync(image.subarray(0, 5)), zlib.gzipSync(image.subarray(5))])),
    '/aws-chunked': encoded('aws-chunked', image),
    '/none': encoded('none', image),
    '/constructor': encoded('constructor', image),
    '/proto': encoded('__proto__', image),
    '/odd-encoding': encoded('gzip;q=1, <script>', image),
  });
});

after(() => server.close());

describe('an image the server compressed anyway', () => {
  for (const route of ['/gzip', '/x-gzip', '/deflate', '/raw-deflate', '/br', '/identity']) {
    it(`${route.slice(1)}: the image comes back decoded, byte for byte`, async () => {
      const got = await fetchImage(`${server.origin}${route}`, options());
      assert.deepEqual(got.data, image);
    });
  }

  it('still asks for the bytes uncompressed', async () => {
    await fetchImage(`${server.origin}/gzip`, options());
    assert.equal(server.requests.at(-1)?.headers['accept-encoding'], 'identity');
  });
});

describe('gzip data followed by more bytes', () => {
  for (const route of ['/gzip-then-junk', '/gzip-then-half-member']) {
    it(`${route.slice(1)}: the image is the gzip data, and the bytes after its end are ignored, as browsers ignore them`, async () => {
      const got = await fetchImage(`${server.origin}${route}`, options());
      assert.deepEqual(got.data, image);
    });
  }

  it('a second whole gzip member is decoded too, as gunzip decodes it', async () => {
    const got = await fetchImage(`${server.origin}/gzip-two-members`, options());
    assert.deepEqual(got.data, image);
  });
});

describe('a compressed body that would expand past the cap', () => {
  for (const route of ['/gzip-bomb', '/br-bomb']) {
    it(`${route.slice(1)}: a small body that expands to 64 MiB is image_too_large at the 1 MiB cap`, async () => {
      await assert.rejects(fetchImage(`${server.origin}${route}`, options()), failsWith('image_too_large', /1048576-byte/));
    });
  }
});

describe('a body the service cannot decode', () => {
  it('corrupt gzip data is image_download_failed, not an image the decoder cannot read', async () => {
    await assert.rejects(fetchImage(`${server.origin}/corrupt-gzip`, options()), failsWith('image_download_failed', /could not be decompressed/));
  });
});

// Browsers pass a body whose Content-Encoding they do not know through as it is (an S3-compatible
// store answering with the aws-chunked of its upload, a server saying "none"), and so did the
// download before it decoded anything: such an image must still come back, for the decoder to judge.
describe('an encoding the service does not know', () => {
  for (const route of ['/aws-chunked', '/none', '/constructor', '/proto', '/odd-encoding']) {
    it(`${route.slice(1)}: the body comes back as it was sent`, async () => {
      const got = await fetchImage(`${server.origin}${route}`, options());
      assert.deepEqual(got.data, image);
    });
  }
});
