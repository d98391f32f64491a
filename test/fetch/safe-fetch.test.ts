// Downloads against a real server on 127.0.0.1. To reach it, most tests inject a policy that
// allows exactly 127.0.0.1, so redirect targets and resolver answers are still judged by the real
// check; the preloaded loopback guard fails the run if any socket heads anywhere else.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type http from 'node:http';
import { TaskError } from '../../src/domain/errors.ts';
import { fetchImage, type FetchOptions } from '../../src/fetch/safe-fetch.ts';
import { startLoopbackServer, type LoopbackServer } from './loopback-server.ts';
import { forbiddenAddressUrls } from '../support/forbidden-urls.ts';

const image = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 254, 255]);
const onlyTestServer = (ip: string): boolean => ip === '127.0.0.1';
const noDns = (): Promise<string[]> => Promise.reject(new Error('test: unexpected DNS lookup'));

let server: LoopbackServer;
const bodyClosed: Array<Promise<unknown>> = [];

function options(overrides: Partial<FetchOptions> = {}): FetchOptions {
  return { maxBytes: 1024 * 1024, timeoutMs: 5000, maxRedirects: 5, allowPrivateAddresses: false, isAllowedAddress: onlyTestServer, resolve: noDns, ...overrides };
}

function failsWith(code: string, message?: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof TaskError, `expected a TaskError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (message) assert.match(err.message, message);
    assert.doesNotMatch(err.message, /\n\s+at /, 'no stack trace in the message');
    return true;
  };
}

function redirect(location: string, status = 302) {
  return (_req: http.IncomingMessage, res: http.ServerResponse) => void res.writeHead(status, { location }).end();
}

function endless(_req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'image/png' });
  const chunk = Buffer.alloc(64 * 1024, 7);
  const pump = (): void => {
    while (!res.destroyed && res.write(chunk));
  };
  res.on('drain', pump);
  bodyClosed.push(once(res, 'close'));
  pump();
}

before(async () => {
  const chain: Record<string, ReturnType<typeof redirect>> = {};
  for (let n = 1; n <= 6; n++) chain[`/chain/${n}`] = redirect(`/chain/${n - 1}`, [301, 302, 303, 307, 308][n % 5]);
  server = await startLoopbackServer({
    '/image.png': (_req, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(image),
    '/chain/0': (_req, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(image),
    ...chain,
    '/loop': redirect('/loop'),
    '/ping': redirect('/pong'),
    '/pong': redirect('/ping'),
    '/to-private': redirect('http://10.0.0.1/a.png'),
    '/to-metadata': redirect('http://169.254.169.254/latest/meta-data/'),
    '/to-file': redirect('file:///etc/passwd'),
    '/to-name': (req, res) => void res.writeHead(307, { location: `http://images.test:${server.port}/image.png` }).end(),
    '/endless': endless,
    '/exactly-cap': (_req, res) => void res.writeHead(200).end(Buffer.alloc(1000, 1)),
    '/declares-huge': (_req, res) => {
      res.writeHead(200, { 'content-length': String(50 * 1024 * 1024) });
      res.write(Buffer.alloc(10));
    },
    '/silent': () => {},
    '/stalls': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(image);
    },
    '/redirect-no-location': (_req, res) => void res.writeHead(302).end(),
  });
});

after(() => server.close());

describe('fetchImage from an allowed server', () => {
  it('returns the exact bytes, content type and final URL', async () => {
    const got = await fetchImage(`${server.origin}/image.png`, options());
    assert.deepEqual(got.data, image);
    assert.equal(got.contentType, 'image/png');
    assert.equal(got.finalUrl, `${server.origin}/image.png`);
  });

  it('asks for images as Cutout/1.0 and for the raw, uncompressed bytes', async () => {
    await fetchImage(`${server.origin}/image.png`, options());
    const head = server.requests.at(-1)?.headers;
    assert.equal(head?.accept, 'image/*');
    assert.equal(head?.['user-agent'], 'Cutout/1.0');
    assert.equal(head?.['accept-encoding'], 'identity');
  });

  it('accepts a body of exactly maxBytes', async () => {
    const got = await fetchImage(`${server.origin}/exactly-cap`, options({ maxBytes: 1000 }));
    assert.equal(got.data.length, 1000);
  });

  it('with allowPrivateAddresses the default policy is lifted and loopback can be fetched', async () => {
    const got = await fetchImage(`${server.origin}/image.png`, options({ isAllowedAddress: undefined, allowPrivateAddresses: true }));
    assert.deepEqual(got.data, image);
  });
});

describe('fetchImage refuses forbidden targets before connecting', () => {
  const direct = forbiddenAddressUrls;
  for (const url of direct) {
    it(`${url} is image_url_forbidden under the default policy`, async () => {
      await assert.rejects(fetchImage(url, options({ isAllowedAddress: undefined })), failsWith('image_url_forbidden'));
    });
  }

  it('the loopback test server itself is refused under the default policy, with no connection made', async () => {
    const before = server.connections;
    await assert.rejects(fetchImage(`${server.origin}/image.png`, options({ isAllowedAddress: undefined })), failsWith('image_url_forbidden'));
    assert.equal(server.connections, before);
  });

  for (const url of ['ftp://example.com/a.png', 'file:///etc/passwd', 'data:image/png;base64,iVBORw0KGgo=']) {
    it(`the scheme of ${url.slice(0, 12)}… is refused even with allowPrivateAddresses`, async () => {
      await assert.rejects(fetchImage(url, options({ allowPrivateAddresses: true })), failsWith('image_url_forbidden', /http and https/));
    });
  }

  it('a hostname that resolves to 127.0.0.1 is refused', async () => {
    const resolve = async () => ['127.0.0.1'];
    await assert.rejects(fetchImage('http://images.test/a.png', options({ isAllowedAddress: undefined, resolve })), failsWith('image_url_forbidden', /images\.test/));
  });

  it('a hostname with one public and one private answer is refused', async () => {
    const resolve = async () => ['93.184.216.34', '10.0.0.5'];
    await assert.rejects(fetchImage('https://images.test/a.png', options({ isAllowedAddress: undefined, resolve })), failsWith('image_url_forbidden'));
  });

  it('the refusal does not reveal the private address a name resolved to', async () => {
    const resolve = async () => ['10.1.2.3'];
    await assert.rejects(fetchImage('http://db.internal/a.png', options({ resolve })), (err: Error) => !err.message.includes('10.1.2.3'));
  });

  it('localhost is refused without asking the resolver', async () => {
    await assert.rejects(fetchImage('http://localhost/a.png', options({ isAllowedAddress: undefined, resolve: noDns })), failsWith('image_url_forbidden'));
  });
});

describe('fetchImage follows redirects only to allowed targets', () => {
  it('a redirect to a private address is refused before any connection', async () => {
    await assert.rejects(fetchImage(`${server.origin}/to-private`, options()), failsWith('image_url_forbidden', /10\.0\.0\.1/));
  });

  it('a redirect to the cloud metadata address is refused before any connection', async () => {
    await assert.rejects(fetchImage(`${server.origin}/to-metadata`, options()), failsWith('image_url_forbidden', /169\.254\.169\.254/));
  });

  it('a redirect to a file: URL is refused', async () => {
    await assert.rejects(fetchImage(`${server.origin}/to-file`, options()), failsWith('image_url_forbidden'));
  });

  it('5 chained redirects (through 301, 302, 303, 307 and 308) are followed', async () => {
    const got = await fetchImage(`${server.origin}/chain/5`, options());
    assert.deepEqual(got.data, image);
    assert.equal(got.finalUrl, `${server.origin}/chain/0`);
  });

  it('6 chained redirects are refused as image_download_failed', async () => {
    await assert.rejects(fetchImage(`${server.origin}/chain/6`, options()), failsWith('image_download_failed', /more than 5/));
  });

  it('a redirect to itself is a loop and image_download_failed', async () => {
    await assert.rejects(fetchImage(`${server.origin}/loop`, options()), failsWith('image_download_failed', /loop/));
  });

  it('a redirect cycle between two URLs is a loop and image_download_failed', async () => {
    await assert.rejects(fetchImage(`${server.origin}/ping`, options()), failsWith('image_download_failed', /loop/));
  });

  it('a redirect without a Location is image_download_failed', async () => {
    await assert.rejects(fetchImage(`${server.origin}/redirect-no-location`, options()), failsWith('image_download_failed', /Location/));
  });
});

describe('fetchImage pins each connection to the address it checked', () => {
  it('a resolver that rebinds after the check cannot redirect the connection', async () => {
    const answers = [['127.0.0.1'], ['10.0.0.5']];
    let calls = 0;
    const resolve = async () => answers[Math.min(calls++, 1)] ?? [];
    const got = await fetchImage(`http://images.test:${server.port}/image.png`, options({ resolve }));
    assert.deepEqual(got.data, image);
    assert.equal(calls, 1, 'resolved once, connected to that answer');
    assert.equal(server.requests.at(-1)?.headers.host, `images.test:${server.port}`, 'the Host header keeps the original name');
  });

  it('a name with several allowed answers is fetched from the next one when the first refuses the connection', async () => {
    // Nothing listens on 127.0.0.2 at the test server's port, so that answer refuses at once.
    const isAllowedAddress = (ip: string): boolean => ip === '127.0.0.2' || ip === '127.0.0.1';
    const resolve = async () => ['127.0.0.2', '127.0.0.1'];
    const got = await fetchImage(`http://images.test:${server.port}/image.png`, options({ resolve, isAllowedAddress }));
    assert.deepEqual(got.data, image);
  });

  it('a name whose every allowed answer refuses is a refused connection', async () => {
    const closed = await startLoopbackServer({});
    await closed.close();
    const isAllowedAddress = (ip: string): boolean => ip === '127.0.0.2' || ip === '127.0.0.1';
    const resolve = async () => ['127.0.0.2', '127.0.0.1'];
    await assert.rejects(fetchImage(`http://images.test:${closed.port}/a.png`, options({ resolve, isAllowedAddress })), failsWith('image_download_failed', /refused/));
  });

  it('a name that rebinds between redirect hops is judged again and refused', async () => {
    const answers = [['127.0.0.1'], ['10.0.0.5']];
    let calls = 0;
    const resolve = async () => answers[Math.min(calls++, 1)] ?? [];
    await assert.rejects(fetchImage(`http://images.test:${server.port}/to-name`, options({ resolve })), failsWith('image_url_forbidden'));
    assert.equal(calls, 2);
  });
});

describe('fetchImage reports failures as image_download_failed', () => {
  it('a 404 names the status', async () => {
    await assert.rejects(fetchImage(`${server.origin}/missing.png`, options()), failsWith('image_download_failed', /404/));
  });

  it('a name that does not resolve', async () => {
    const resolve = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' }));
    await assert.rejects(fetchImage('http://nowhere.test/a.png', options({ resolve })), failsWith('image_download_failed', /resolve/));
  });

  it('a refused connection', async () => {
    const closed = await startLoopbackServer({});
    await closed.close();
    await assert.rejects(fetchImage(`${closed.origin}/a.png`, options()), failsWith('image_download_failed', /refused/));
  });
});

describe('fetchImage caps size and time', () => {
  it('an endless body is image_too_large at the cap, and the download is aborted', async () => {
    const closedBefore = bodyClosed.length;
    await assert.rejects(fetchImage(`${server.origin}/endless`, options({ maxBytes: 256 * 1024 })), failsWith('image_too_large', /262144/));
    await bodyClosed[closedBefore];
  });

  it('a Content-Length over the cap is refused before the body is read', async () => {
    await assert.rejects(fetchImage(`${server.origin}/declares-huge`, options()), failsWith('image_too_large'));
  });

  it('a server that never answers times out within the deadline', async () => {
    const started = performance.now();
    await assert.rejects(fetchImage(`${server.origin}/silent`, options({ timeoutMs: 300 })), failsWith('image_download_failed', /timed out after 300 ms/));
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 290 && elapsed < 1500, `gave up after ${elapsed} ms`);
  });

  it('a body that stalls midway times out', async () => {
    await assert.rejects(fetchImage(`${server.origin}/stalls`, options({ timeoutMs: 300 })), failsWith('image_download_failed', /timed out/));
  });

  it('a resolver that never answers times out', async () => {
    const resolve = () => new Promise<string[]>(() => {});
    await assert.rejects(fetchImage('http://slow-dns.test/a.png', options({ resolve, timeoutMs: 300 })), failsWith('image_download_failed', /timed out/));
  });
});
