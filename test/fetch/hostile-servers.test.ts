// Downloads from servers that break HTTP on purpose, written byte by byte on a loopback socket:
// each must end in a task error the client can act on, and never in a download that hangs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { TaskError } from '../../src/domain/errors.ts';
import { fetchImage, type FetchOptions } from '../../src/fetch/safe-fetch.ts';
import { startRawHttpServer, type RawHttpServer } from './raw-http-server.ts';

const image = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 254, 255]);
const onlyTestServer = (ip: string): boolean => ip === '127.0.0.1';
const noDns = (): Promise<string[]> => Promise.reject(new Error('test: unexpected DNS lookup'));
// Long enough that an answer arriving before it proves the download did not wait for the deadline.
const patient = 60_000;

let server: RawHttpServer;

function options(overrides: Partial<FetchOptions> = {}): FetchOptions {
  return { maxBytes: 1024 * 1024, timeoutMs: patient, maxRedirects: 5, allowPrivateAddresses: false, isAllowedAddress: onlyTestServer, resolve: noDns, ...overrides };
}

function failsWith(code: string, message?: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (message) assert.match(err.message, message);
    return true;
  };
}

// Sends `start`, then a byte every 10 ms for as long as the client listens: each read sees progress,
// so only a deadline for the whole download ends it.
function trickle(socket: Socket, start: string): void {
  socket.write(start);
  const timer = setInterval(() => socket.write('a'), 10);
  socket.on('close', () => clearInterval(timer));
}

before(async () => {
  server = await startRawHttpServer({
    '/no-content': (socket) => void socket.end('HTTP/1.1 204 No Content\r\n\r\n'),
    '/partial': (socket) => void socket.end('HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-3/4096\r\nContent-Length: 4\r\n\r\n\x89PNG'),
    '/to-cafe': (socket) => void socket.end(Buffer.from('HTTP/1.1 302 Found\r\nLocation: /caf\u00c3\u00a9.png\r\nContent-Length: 0\r\n\r\n', 'latin1')),
    '/caf%C3%A9.png': (socket) => void socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: ${image.length}\r\n\r\n`), image])),
    '/to-latin1': (socket) => void socket.end(Buffer.from('HTTP/1.1 302 Found\r\nLocation: /caf\u00e9.png\r\nContent-Length: 0\r\n\r\n', 'latin1')),
    '/short-body': (socket) => void socket.end('HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 1000\r\n\r\n\x89PNG'),
    '/short-chunks': (socket) => void socket.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n\x89PNG\r\n'),
    '/bad-chunk': (socket) => void socket.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n\x89PNG\r\nzz\r\n'),
    '/reset-mid-body': (socket) => void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n\x89PNG', () => socket.resetAndDestroy()),
    '/not-http': (socket) => void socket.end('<html>hello</html>\r\n\r\n'),
    '/huge-head': (socket) => void socket.end(`HTTP/1.1 200 OK\r\nX-Padding: ${'a'.repeat(64 * 1024)}\r\n\r\n`),
    '/page': (socket) => void socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 52\r\n\r\n\n  <!doctype html><html><body><img src=a.png></html>'),
    '/mislabelled': (socket) => void socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${image.length}\r\n\r\n`), image])),
    '/empty': (socket) => void socket.end('HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 0\r\n\r\n'),
    '/trickled-head': (socket) => trickle(socket, 'HTTP/1.1 200 OK\r\nX-Slow: '),
    '/trickled-body': (socket) => trickle(socket, 'HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n'),
    // The connection is left open, as a server that really switched protocols would.
    '/switching': (socket) => void socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n'),
  });
});

after(() => server.close());

describe('a server that answers with something other than an image', () => {
  it('a web page is unsupported_image saying it is a page and not the image', async () => {
    await assert.rejects(fetchImage(`${server.origin}/page`, options()), failsWith('unsupported_image', /web page \(HTML\), not to an image file/));
  });

  it('an image served as text/html is still the image', async () => {
    const got = await fetchImage(`${server.origin}/mislabelled`, options());
    assert.deepEqual(got.data, image);
  });

  it('an empty 200 is unsupported_image saying the body was empty', async () => {
    await assert.rejects(fetchImage(`${server.origin}/empty`, options()), failsWith('unsupported_image', /empty body/));
  });

  it('101 Switching Protocols fails at once with its status and lets go of the connection', { timeout: 10_000 }, async () => {
    await assert.rejects(fetchImage(`${server.origin}/switching`, options()), failsWith('image_download_failed', /HTTP status 101/));
    await server.allClosed();
  });

  it('204 No Content is image_download_failed with its status, not an empty image', async () => {
    await assert.rejects(fetchImage(`${server.origin}/no-content`, options()), failsWith('image_download_failed', /HTTP status 204/));
  });

  it('206 Partial Content, unasked for, is image_download_failed rather than the first bytes taken for the image', async () => {
    await assert.rejects(fetchImage(`${server.origin}/partial`, options()), failsWith('image_download_failed', /HTTP status 206/));
  });
});

describe('a redirect whose Location holds non-ASCII bytes', () => {
  it('raw UTF-8 is read as UTF-8, as browsers read it, and the image at /café.png is fetched', async () => {
    const got = await fetchImage(`${server.origin}/to-cafe`, options());
    assert.deepEqual(got.data, image);
    assert.equal(got.finalUrl, `${server.origin}/caf%C3%A9.png`);
  });

  it('bytes that are not UTF-8 are read as Latin-1 characters, so a Latin-1 é reaches /café.png as well', async () => {
    const got = await fetchImage(`${server.origin}/to-latin1`, options());
    assert.equal(got.finalUrl, `${server.origin}/caf%C3%A9.png`);
  });
});

describe('a server that breaks HTTP', () => {
  for (const [route, what] of [
    ['/short-body', 'closes before its Content-Length is reached'],
    ['/short-chunks', 'closes before the last chunk'],
    ['/bad-chunk', 'sends a chunk size that is not hexadecimal'],
    ['/reset-mid-body', 'resets the connection mid-body'],
  ]) {
    it(`a body that ${what} is image_download_failed saying the image broke off`, async () => {
      await assert.rejects(fetchImage(`${server.origin}${route}`, options()), failsWith('image_download_failed', /broke off before the whole image arrived/));
    });
  }

  it('an answer that is not HTTP at all is image_download_failed saying so', async () => {
    await assert.rejects(fetchImage(`${server.origin}/not-http`, options()), failsWith('image_download_failed', /not valid HTTP \(HPE_[A-Z_]+\)/));
  });

  it('a 64 KB header section is refused at Node\'s 16 KB limit as not valid HTTP', async () => {
    await assert.rejects(fetchImage(`${server.origin}/huge-head`, options()), failsWith('image_download_failed', /not valid HTTP \(HPE_HEADER_OVERFLOW\)/));
  });
});

describe('a server that keeps sending, slowly', () => {
  for (const route of ['/trickled-head', '/trickled-body']) {
    it(`${route.slice(1)}: a byte every 10 ms does not keep the download alive past its deadline`, async () => {
      // The trickle never ends: an idle timeout, which each byte resets, would never fire, and only
      // the whole download's deadline ends it (no wall-clock bound here, which a loaded machine could miss).
      await assert.rejects(fetchImage(`${server.origin}${route}`, options({ timeoutMs: 300 })), failsWith('image_download_failed', /timed out after 300 ms/));
      await server.allClosed();
    });
  }
});
