import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

const imageUrl = 'https://images.example.test/photo.jpg';

describeEachEngine('POST /bg/removals validation', (engine) => {
  let server: TestServer;
  let key: string;

  before(async () => {
    // No worker runs, so every accepted create stays active: room for all of them.
    server = await startTestServer({ CUTOUT_MAX_ACTIVE_TASKS: '100' }, { engine });
    ({ key } = await server.account({ credits: 1000 }));
  });
  after(() => server.close());

  async function expectInvalid(init: RequestInit, messagePattern: RegExp): Promise<void> {
    const res = await server.request('/api/v1/bg/removals', { ...init, method: 'POST', key });
    const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.code, 'invalid_request');
    assert.match(body.error.message, messagePattern);
    assert.equal(body.error.request_id, res.headers.get('x-request-id'));
  }

  const json = (body: string): RequestInit => ({ headers: { 'content-type': 'application/json' }, body });

  test('a valid request is accepted with 202 and echoes its input with defaults applied', async () => {
    const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key });
    assert.equal(res.status, 202);
    const task = (await res.json()) as Record<string, unknown>;
    assert.match(String(task.id), /^bgr_[0-9a-z]{20}$/);
    assert.equal(task.object, 'bg.removal');
    assert.equal(task.model, 'bg-remover');
    assert.equal(task.status, 'queued');
    assert.deepEqual(task.input, { image_url: imageUrl, subject: 'auto', precision: 'standard', output_format: 'png' });
    assert.equal(task.output, null);
    assert.equal(task.usage, null);
    assert.equal(task.error, null);
    assert.ok(!Number.isNaN(Date.parse(String(task.created_at))));
    assert.equal(task.created_at, task.updated_at);
  });

  test('hd is accepted and echoed as high', async () => {
    const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl, precision: 'hd', model: 'bg-remover', subject: 'hair', output_format: 'webp' }), key });
    assert.equal(res.status, 202);
    const task = (await res.json()) as { input: Record<string, string> };
    assert.deepEqual(task.input, { image_url: imageUrl, subject: 'hair', precision: 'high', output_format: 'webp' });
  });

  test('malformed JSON is refused', () => expectInvalid(json('{"image_url": '), /Malformed JSON/));
  test('an empty body is refused', () => expectInvalid(json(''), /empty/));
  test('a JSON array is refused as not an object', () => expectInvalid(json('[1,2]'), /must be a JSON object/));
  test('a JSON string is refused as not an object', () => expectInvalid(json('"hello"'), /must be a JSON object/));
  test('a JSON null is refused as not an object', () => expectInvalid(json('null'), /must be a JSON object/));
  test('a text/plain body is refused naming the content type', () =>
    expectInvalid({ headers: { 'content-type': 'text/plain' }, body: `{"image_url":"${imageUrl}"}` }, /Content-Type must be application\/json/));
  test('a form-encoded body is refused', () => expectInvalid({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'image_url=x' }, /application\/json/));
  test('a multipart upload is refused with a message that upload is not available', async () => {
    const form = new FormData();
    form.append('image_file', new Blob([new Uint8Array([1, 2, 3])]), 'a.png');
    await expectInvalid({ body: form }, /upload is not available in this version/);
  });
  test('a missing image_url is refused', () => expectInvalid(json('{}'), /image_url is required/));
  test('a relative image_url is refused', () => expectInvalid(json('{"image_url":"/photo.jpg"}'), /image_url must be an absolute http or https URL/));
  test('an ftp image_url is refused', () => expectInvalid(json('{"image_url":"ftp://example.test/a.png"}'), /absolute http or https URL/));
  test('a data: image_url is refused', () => expectInvalid(json('{"image_url":"data:image/png;base64,AAAA"}'), /absolute http or https URL/));
  test('a non-string image_url is refused', () => expectInvalid(json('{"image_url":42}'), /image_url must be a string/));
  for (const [label, char] of [
    ['a NUL', '\u0000'],
    ['a tab', '\t'],
    ['a newline', '\n'],
    ['a DEL', '\u007f'],
    ['a C1 control', '\u0085'],
  ] as const) {
    // A URL parser drops or percent-encodes these, so the address fetched would not be the one sent and echoed.
    test(`an image_url with ${label} character is refused naming image_url`, () =>
      expectInvalid(json(JSON.stringify({ image_url: `https://images.example.test/a${char}b.jpg` })), /^image_url must not contain control characters/));
  }
  test('an image_url with control characters around it is refused naming image_url', () =>
    expectInvalid(json(JSON.stringify({ image_url: `\u0000${imageUrl}\n` })), /^image_url must not contain control characters/));
  test('an image_url with an unpaired surrogate is refused naming image_url', () =>
    expectInvalid(json('{"image_url":"https://images.example.test/a\\ud800b.jpg"}'), /^image_url must be valid Unicode/));
  // A URL parser repairs these into another address (http:x is fetched as http://x/), so what was
  // stored and echoed would not be what is fetched: refused rather than guessed at.
  for (const url of ['http:x', 'https:images.example.test/photo.jpg', 'http:/images.example.test/photo.jpg', 'https:///images.example.test/photo.jpg']) {
    test(`a create with image_url ${url} gets 400 invalid_request naming image_url`, () =>
      expectInvalid(json(JSON.stringify({ image_url: url })), /^image_url must begin with http:\/\/ or https:\/\/ followed by the host$/));
  }
  for (const url of ['http:\\\\images.example.test\\photo.jpg', 'https://images.example.test\\photo.jpg', 'https://images.example.test/photo.jpg?size=a\\b']) {
    test(`an image_url with a backslash is refused (${url})`, () =>
      expectInvalid(json(JSON.stringify({ image_url: url })), /^image_url must not contain a backslash$/));
  }
  for (const url of [` ${imageUrl}`, `${imageUrl} `]) {
    test(`an image_url with a space at its start or end is refused (${JSON.stringify(url)})`, () =>
      expectInvalid(json(JSON.stringify({ image_url: url })), /^image_url must not begin or end with a space$/));
  }
  test('an upper-case HTTPS:// scheme is still accepted, and echoed as sent', async () => {
    const url = 'HTTPS://images.example.test/photo.jpg';
    const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: url }), key });
    assert.equal(res.status, 202);
    assert.equal(((await res.json()) as { input: { image_url: string } }).input.image_url, url);
  });
  test('an image_url that names the same address in another spelling (host case, default port, a space in the path) is accepted as sent', async () => {
    const url = 'https://Images.Example.TEST:443/summer photo.jpg';
    const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: url }), key });
    assert.equal(res.status, 202);
    assert.equal(((await res.json()) as { input: { image_url: string } }).input.image_url, url);
  });
  test('an image_url with non-ASCII letters is accepted as sent', async () => {
    const url = 'https://images.example.test/été/😀.jpg';
    const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: url }), key });
    assert.equal(res.status, 202);
    assert.equal(((await res.json()) as { input: { image_url: string } }).input.image_url, url);
  });
  test('an image_url longer than 2048 characters is refused', () =>
    expectInvalid(json(JSON.stringify({ image_url: `https://example.test/${'a'.repeat(2030)}` })), /at most 2048 characters/));
  test('an image_url of 2048 characters is accepted however many of them are emoji, and 2049 are refused', async () => {
    // Characters as the published schema's maxLength counts them: an emoji is one, not two UTF-16 units.
    const url = `https://example.test/${'😀'.repeat(2048 - 'https://example.test/'.length)}`;
    const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: url }), key });
    assert.equal(res.status, 202, await res.clone().text());
    assert.equal(((await res.json()) as { input: { image_url: string } }).input.image_url, url);
    await expectInvalid(json(JSON.stringify({ image_url: `${url}😀` })), /at most 2048 characters/);
  });
  test('an unknown field is refused and named', () => expectInvalid(json(JSON.stringify({ image_url: imageUrl, size: 'full' })), /Unknown field "size"/));
  // JSON.stringify drops a "__proto__" key, so these bodies are written out.
  test('a "__proto__" field is refused and named like any other unknown field', () =>
    expectInvalid(json(`{"image_url":"${imageUrl}","__proto__":{"admin":true}}`), /^Unknown field "__proto__"/));
  test('a "constructor" field holding "prototype" is refused and named like any other unknown field', () =>
    expectInvalid(json(`{"image_url":"${imageUrl}","constructor":{"prototype":{"admin":true}}}`), /^Unknown field "constructor"/));
  // "é" as Latin-1: one byte, 0xE9, which UTF-8 never has alone.
  const latin1Body = () => Buffer.from(`{"image_url":"https://images.example.test/caf\u00e9.jpg"}`, 'latin1');
  const chunked = (bytes: Buffer) => new ReadableStream({ start: (c) => (c.enqueue(bytes), c.close()) });
  test('a body that is not UTF-8 is refused saying so', () => expectInvalid({ headers: { 'content-type': 'application/json' }, body: latin1Body() }, /^The request body is not valid UTF-8/));
  test('a body that is not UTF-8 sent chunked is refused saying so, not stored with replacement characters', () =>
    expectInvalid({ headers: { 'content-type': 'application/json' }, body: chunked(latin1Body()), duplex: 'half' } as RequestInit, /^The request body is not valid UTF-8/));
  test('a charset parameter does not change how the body is read: JSON is UTF-8', async () => {
    const headers = { 'content-type': 'application/json; charset=iso-8859-1' };
    await expectInvalid({ headers, body: latin1Body() }, /^The request body is not valid UTF-8/);
    const url = 'https://images.example.test/café.jpg';
    const res = await server.request('/api/v1/bg/removals', { method: 'POST', headers, body: JSON.stringify({ image_url: url }), key });
    assert.equal(res.status, 202, await res.clone().text());
    assert.equal(((await res.json()) as { input: { image_url: string } }).input.image_url, url);
  });
  test('a body starting with a byte order mark is taken without it', async () => {
    const res = await server.request('/api/v1/bg/removals', { ...json(`\uFEFF{"image_url":"${imageUrl}"}`), method: 'POST', key });
    assert.equal(res.status, 202, await res.clone().text());
    assert.equal(((await res.json()) as { input: { image_url: string } }).input.image_url, imageUrl);
  });
  test('a model other than bg-remover is refused', () => expectInvalid(json(JSON.stringify({ image_url: imageUrl, model: 'u2net' })), /model must be "bg-remover"/));
  test('a bad subject is refused', () => expectInvalid(json(JSON.stringify({ image_url: imageUrl, subject: 'cat' })), /subject must be one of auto, product, portrait, hair/));
  test('a bad precision is refused', () => expectInvalid(json(JSON.stringify({ image_url: imageUrl, precision: 'ultra' })), /precision must be one of standard, high, hd/));
  test('a bad output_format is refused', () => expectInvalid(json(JSON.stringify({ image_url: imageUrl, output_format: 'jpg' })), /output_format must be one of png, webp/));
  test('an Idempotency-Key longer than 128 characters is refused', () =>
    expectInvalid({ headers: { 'content-type': 'application/json', 'idempotency-key': 'k'.repeat(129) }, body: JSON.stringify({ image_url: imageUrl }) }, /Idempotency-Key must be at most 128 characters/));
  test('an Idempotency-Key of 128 accented letters sent as UTF-8 is accepted, and 129 are refused', async () => {
    // fetch sends a header string's characters as bytes: this is the key's UTF-8 encoding on the wire.
    const utf8Key = (letters: number) => Buffer.from('é'.repeat(letters)).toString('latin1');
    const accepted = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), headers: { 'content-type': 'application/json', 'idempotency-key': utf8Key(128) }, key });
    assert.equal(accepted.status, 202, await accepted.text());
    await expectInvalid({ headers: { 'content-type': 'application/json', 'idempotency-key': utf8Key(129) }, body: JSON.stringify({ image_url: imageUrl }) }, /Idempotency-Key must be at most 128 characters/);
  });
  test('an empty Idempotency-Key is refused', () =>
    expectInvalid({ headers: { 'content-type': 'application/json', 'idempotency-key': '' }, body: JSON.stringify({ image_url: imageUrl }) }, /Idempotency-Key must not be empty/));

  test('every error carries a unique request id, also in the X-Request-Id header', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await server.request('/api/v1/bg/removals', { ...json('{}'), method: 'POST', key });
      const body = (await res.json()) as { error: { request_id: string } };
      assert.equal(body.error.request_id, res.headers.get('x-request-id'));
      ids.add(body.error.request_id);
    }
    assert.equal(ids.size, 5);
  });

  test('an unknown route answers 404 with the Error body', async () => {
    const res = await server.request('/api/v1/nope', { key });
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'not_found');
  });
});
