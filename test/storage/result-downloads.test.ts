import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { DiskResultStore } from '../../src/storage/disk-result-store.ts';
import { loadSigningSecret, ResultUrlSigner } from '../../src/storage/signed-url.ts';
import { openDescriptorsOnResult } from '../support/open-descriptors.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Resuming and revalidating downloads of a stored result, as download managers and browsers do.
let server: TestServer;
let store: DiskResultStore;
let signer: ResultUrlSigner;
const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
const key = 'bgr_downloadsresume0001-1.png';
let url: string;

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

/** The status of a GET whose array-valued headers go out as one header line per value, which fetch cannot send. */
function statusWithLines(headers: Record<string, string | string[]>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

before(async () => {
  server = await startTestServer({ CUTOUT_RESULT_URL_TTL_SECONDS: '600' });
  store = new DiskResultStore(path.join(server.dataDir, 'results'));
  await store.put(key, bytes);
  signer = new ResultUrlSigner(loadSigningSecret(server.dataDir, undefined), () => server.url, 600);
  url = signer.sign(key, Date.now()).url;
});
after(() => server.close());

test('a download names its version and says that ranges are accepted', async () => {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/png');
  assert.equal(res.headers.get('content-length'), '1000');
  assert.equal(res.headers.get('accept-ranges'), 'bytes');
  assert.match(res.headers.get('etag') ?? '', /^"[0-9a-f]+-[0-9a-f]+"$/);
  assert.ok(Date.parse(res.headers.get('last-modified') ?? '') > 0);
  assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes);
});

test('an interrupted download resumes with a byte range and gets 206 with only those bytes', async () => {
  for (const [range, start, end] of [['bytes=0-9', 0, 9], ['bytes=990-', 990, 999], ['bytes=-5', 995, 999], ['bytes=500-5000', 500, 999]] as const) {
    const res = await fetch(url, { headers: { Range: range } });
    assert.equal(res.status, 206, range);
    assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/1000`, range);
    assert.equal(res.headers.get('content-length'), String(end - start + 1), range);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes.subarray(start, end + 1), range);
  }
});

test('a range that starts past the end gets 416 range_not_satisfiable with the size, as the Error body', async () => {
  const res = await fetch(url, { headers: { Range: 'bytes=1000-' } });
  assert.equal(res.status, 416);
  assert.equal(res.headers.get('content-range'), 'bytes */1000');
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(res.headers.get('content-disposition'), null);
  assert.equal(await errorCode(res), 'range_not_satisfiable');
});

test('several ranges, another unit or a malformed header get the whole file', async () => {
  for (const range of ['bytes=0-1,5-6', 'items=0-1', 'bytes=abc']) {
    const res = await fetch(url, { headers: { Range: range } });
    assert.equal(res.status, 200, range);
    assert.equal((await res.arrayBuffer()).byteLength, 1000, range);
  }
});

test('a range under If-Range is served only while the file is the version the client names', async () => {
  const tag = (await fetch(url, { method: 'HEAD' })).headers.get('etag') ?? '';
  const same = await fetch(url, { headers: { Range: 'bytes=0-9', 'If-Range': tag } });
  assert.equal(same.status, 206);
  await same.arrayBuffer();
  const other = await fetch(url, { headers: { Range: 'bytes=0-9', 'If-Range': '"0-0"' } });
  assert.equal(other.status, 200);
  assert.equal((await other.arrayBuffer()).byteLength, 1000);
});

test('a client holding the current version gets 304 without a body', async () => {
  const first = await fetch(url);
  await first.arrayBuffer();
  const tag = first.headers.get('etag') ?? '';
  const byTag = await fetch(url, { headers: { 'If-None-Match': tag } });
  assert.equal(byTag.status, 304);
  assert.equal(byTag.headers.get('etag'), tag);
  // A cache updates the stored image's headers from a 304: it must not relabel it as anything else.
  assert.equal(byTag.headers.get('content-type'), null);
  assert.equal(byTag.headers.get('content-length'), null);
  assert.equal((await byTag.arrayBuffer()).byteLength, 0);
  const byDate = await fetch(url, { headers: { 'If-Modified-Since': first.headers.get('last-modified') ?? '' } });
  assert.equal(byDate.status, 304);
  const changed = await fetch(url, { headers: { 'If-None-Match': '"0-0"' } });
  assert.equal(changed.status, 200);
  assert.equal((await changed.arrayBuffer()).byteLength, 1000);
});

// RFC 9110 §13.2.2: If-Match first (strong comparison), else If-Unmodified-Since; a false one is
// 412, before If-None-Match and Range are looked at. A client resuming with If-Match must never
// splice bytes of another version onto what it holds.
test('a download under If-Match or If-Unmodified-Since that no longer holds gets 412 precondition_failed, as the Error body', async () => {
  const head = await fetch(url, { method: 'HEAD' });
  const tag = head.headers.get('etag') ?? '';
  const modified = Date.parse(head.headers.get('last-modified') ?? '');
  const before = new Date(modified - 1000).toUTCString();
  // The same second in the two obsolete forms a recipient must read (RFC 9110 §5.6.7).
  const [day, date, month, year, time] = before.split(' ') as [string, string, string, string, string];
  const days = { Mon: 'Monday', Tue: 'Tuesday', Wed: 'Wednesday', Thu: 'Thursday', Fri: 'Friday', Sat: 'Saturday', Sun: 'Sunday' };
  const rfc850 = `${days[day.slice(0, 3) as keyof typeof days]}, ${date}-${month}-${year.slice(2)} ${time} GMT`;
  const asctime = `${day.slice(0, 3)} ${month} ${date.replace(/^0/, ' ')} ${time} ${year}`;
  for (const headers of [
    { 'If-Match': '"0-0"' },
    { 'If-Match': `W/${tag}` },
    { 'If-Match': '"0-0"', Range: 'bytes=0-9' },
    { 'If-Match': '"0-0"', 'If-None-Match': tag },
    { 'If-Unmodified-Since': before },
    { 'If-Unmodified-Since': before, Range: 'bytes=0-9' },
    { 'If-Unmodified-Since': rfc850 },
    { 'If-Unmodified-Since': asctime },
  ] as Record<string, string>[]) {
    const res = await fetch(url, { headers });
    assert.equal(res.status, 412, JSON.stringify(headers));
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('content-disposition'), null);
    assert.equal(await errorCode(res), 'precondition_failed');
  }
  assert.equal((await fetch(url, { method: 'HEAD', headers: { 'If-Match': '"0-0"' } })).status, 412);
  // Conditions that hold, and an If-Unmodified-Since that If-Match overrides or that is no date.
  for (const [headers, status] of [
    [{ 'If-Match': tag }, 200],
    [{ 'If-Match': `"0-0", ${tag}` }, 200],
    [{ 'If-Match': '*' }, 200],
    [{ 'If-Match': tag, Range: 'bytes=0-9' }, 206],
    [{ 'If-Match': tag, 'If-None-Match': tag }, 304],
    [{ 'If-Unmodified-Since': new Date(modified).toUTCString() }, 200],
    [{ 'If-Match': tag, 'If-Unmodified-Since': before }, 200],
    [{ 'If-Unmodified-Since': 'yesterday' }, 200],
    [{ 'If-Unmodified-Since': '1' }, 200],
    [{ 'If-Unmodified-Since': `${before}, ${before}` }, 200],
  ] as [Record<string, string>, number][]) {
    const res = await fetch(url, { headers });
    assert.equal(res.status, status, JSON.stringify(headers));
    await res.arrayBuffer();
  }
});

// RFC 9110 §5.3: two lines of a field are one list. §13.1.3 and §13.1.4 have a recipient ignore an
// If-Modified-Since or If-Unmodified-Since that holds more than one date, and Node keeps only the
// first line of these fields, so the second date was never seen.
test('an If-Unmodified-Since or If-Modified-Since sent on two lines is a list of dates and is ignored', async () => {
  const head = await fetch(url, { method: 'HEAD' });
  const modified = Date.parse(head.headers.get('last-modified') ?? '');
  const before = new Date(modified - 1000).toUTCString();
  const now = new Date(modified).toUTCString();
  assert.equal(await statusWithLines({ 'If-Unmodified-Since': [before, now] }), 200, 'If-Unmodified-Since');
  assert.equal(await statusWithLines({ 'If-Modified-Since': [now, before] }), 200, 'If-Modified-Since');
  // One line of each still counts.
  assert.equal(await statusWithLines({ 'If-Unmodified-Since': before }), 412);
  assert.equal(await statusWithLines({ 'If-Modified-Since': now }), 304);
});

// RFC 9110 §8.6 and §15.4.5: a 304 carries no Content-Length, or the one a 200 would have; a
// cache would otherwise record the image as empty.
test('a HEAD by a client holding the current version gets 304 with the headers a GET would, and no Content-Length of 0', async () => {
  const tag = (await fetch(url, { method: 'HEAD' })).headers.get('etag') ?? '';
  const get = await fetch(url, { headers: { 'If-None-Match': tag } });
  await get.arrayBuffer();
  const head = await fetch(url, { method: 'HEAD', headers: { 'If-None-Match': tag } });
  assert.equal(head.status, 304);
  assert.notEqual(head.headers.get('content-length'), '0');
  for (const name of ['etag', 'last-modified', 'cache-control', 'content-type', 'content-length']) {
    assert.equal(head.headers.get(name), get.headers.get(name), name);
  }
});

test('HEAD gives the headers of the download and no body', async () => {
  const res = await fetch(url, { method: 'HEAD' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-length'), '1000');
  assert.equal(res.headers.get('content-type'), 'image/png');
  assert.equal((await res.arrayBuffer()).byteLength, 0);
});

test('every answer that sends no bytes of the file closes it: 304, HEAD, 416 and an empty file', async () => {
  const empty = 'bgr_downloadsempty00001-1.png';
  await store.put(empty, Buffer.alloc(0));
  const emptyUrl = signer.sign(empty, Date.now()).url;
  const tag = (await fetch(url, { method: 'HEAD' })).headers.get('etag') ?? '';
  for (const [target, init] of [
    [url, { headers: { 'If-None-Match': tag } }],
    [url, { method: 'HEAD' }],
    [url, { headers: { Range: 'bytes=5000-' } }],
    [emptyUrl, {}],
  ] as const) {
    const res = await fetch(target, init);
    await res.arrayBuffer();
    assert.ok(res.status < 500, `${res.status}`);
  }
  const whole = await fetch(emptyUrl);
  assert.equal(whole.status, 200);
  assert.equal(whole.headers.get('content-length'), '0');
  assert.equal((await whole.arrayBuffer()).byteLength, 0);
  assert.equal(await openDescriptorsOnResult(key), 0);
  assert.equal(await openDescriptorsOnResult(empty), 0);
});

test('a result deleted by retention after its download began is still served whole', async () => {
  const file = await store.open(key);
  assert.ok(file);
  await store.delete(key);
  const chunks: Buffer[] = [];
  for await (const chunk of file.read()) chunks.push(chunk as Buffer);
  assert.deepEqual(Buffer.concat(chunks), bytes);
  assert.equal(await store.open(key), undefined);
  await store.put(key, bytes);
});

test('a result file that cannot be read gets the Error body, not image headers over JSON', async () => {
  const broken = 'bgr_downloadsbroken0001-1.png';
  // A folder where the file should be opens, then fails at the first read.
  await fs.mkdir(path.join(server.dataDir, 'results', broken));
  const res = await fetch(signer.sign(broken, Date.now()).url);
  assert.equal(res.status, 500);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(res.headers.get('content-disposition'), null);
  assert.equal(res.headers.get('cache-control'), null);
  assert.equal(await errorCode(res), 'internal_error');
});
