// Downloads from servers that break HTTP on purpose, written byte by byte on a loopback socket:
// each must end in a task error the client can act on, and never in a download that hangs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskError } from '../../src/domain/errors.ts';
import { fetchImage, type FetchOptions } from '../../src/fetch/safe-fetch.ts';
import { startRawHttpServer, type RawHttpServer } from './raw-http-server.ts';

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

before(async () => {
  server = await startRawHttpServer({
    // The connection is left open, as a server that really switched protocols would.
    '/no-content': (socket) => void socket.end('HTTP/1.1 204 No Content\r\n\r\n'),
    '/partial': (socket) => void socket.end('HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-3/4096\r\nContent-Length: 4\r\n\r\n\x89PNG'),
    '/switching': (socket) => void socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n'),
  });
});

after(() => server.close());

describe('a server that answers with something other than an image', () => {
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
