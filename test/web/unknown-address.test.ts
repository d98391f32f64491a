// A mistyped address: a browser outside the API gets the web app's page, with the app's headers;
// the API and any client that asks for JSON (or names no type) keep the Error body.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.ts';

// What a browser sends when the user types an address.
const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

test("a browser that mistypes a web address gets the app's HTML Not found page with its security headers", async () => {
  for (const pathname of ['/app/typo', '/app/settings/typo?x=1', '/sign-inn', '/favicon.ico/x']) {
    const res = await server.request(pathname, { headers: { accept: browserAccept } });
    const body = await res.text();
    assert.equal(res.status, 404, pathname);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/, `${pathname}: ${body.slice(0, 200)}`);
    assert.match(body, /<h1>Not found<\/h1>/);
    assert.match(body, /href="\/app\/remove"/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
    assert.equal(res.headers.get('vary'), 'Accept', 'a cache keeps the page apart from the JSON');
  }
  const head = await server.request('/app/typo', { method: 'HEAD', headers: { accept: browserAccept } });
  assert.equal(head.status, 404);
  assert.match(head.headers.get('content-type') ?? '', /^text\/html/);
});

test('the API, and clients that ask for JSON or name no type, still get the Error body for an unknown address', async () => {
  const cases: [string, Record<string, string>][] = [
    ['/api/v1/typo', { accept: browserAccept }],
    ['/api', { accept: browserAccept }],
    ['/api/', { accept: 'text/html' }],
    ['/app/typo', {}],
    ['/app/typo', { accept: '*/*' }],
    ['/app/typo', { accept: 'application/json' }],
    ['/app/typo', { accept: 'application/json, text/html;q=0.5' }],
    ['/app/typo', { accept: 'text/html;q=0, */*' }],
  ];
  for (const [pathname, headers] of cases) {
    const res = await server.request(pathname, { headers });
    const label = `${pathname} with ${JSON.stringify(headers)}`;
    assert.equal(res.status, 404, label);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, label);
    const body = (await res.json()) as { error: { code: string; request_id: string } };
    assert.equal(body.error.code, 'not_found', label);
    assert.match(body.error.request_id, /^req_/);
    if (!pathname.startsWith('/api')) assert.equal(res.headers.get('vary'), 'Accept', label);
  }
});
