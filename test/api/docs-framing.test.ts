// The readable docs take an API key ("Authorize"), so no other site may frame them to trick a
// visitor into typing one (clickjacking): /docs and its assets are sent as the web app's pages are,
// never to be framed. Swagger UI still works under these headers, as a real browser shows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';

const chromiumPath = '/usr/bin/chromium';
const skip = fs.existsSync(chromiumPath) ? false : `${chromiumPath} is missing: install Debian's Chromium (apt-get install -y chromium) to run the browser test; CI installs it`;

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

test('/docs, its page, its assets and its description all refuse to be framed', async () => {
  for (const pathname of ['/docs', '/docs/', '/docs/static/swagger-ui.css', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/docs/json']) {
    const res = await server.request(pathname);
    await res.arrayBuffer();
    assert.equal(res.status, 200, pathname);
    assert.equal(res.headers.get('x-frame-options'), 'DENY', pathname);
    assert.match(res.headers.get('content-security-policy') ?? '', /(^|;)\s*frame-ancestors 'none'\s*(;|$)/, pathname);
  }
});

describe('the docs in a browser', { skip }, () => {
  let browser: Browser;
  before(async () => {
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => browser?.close());

  test('Swagger UI lists the operations and opens Authorize, with nothing refused by the policy', async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') refused.push(message.text());
    });
    await page.goto(`${server.url}/docs/`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    assert.ok((await page.locator('.opblock').count()) >= 3, 'the API operations are listed');
    await page.getByRole('button', { name: /Authorize/ }).first().click();
    await page.locator('.modal-ux input').first().waitFor({ timeout: 10_000 });
    assert.deepEqual(refused, []);
    await page.close();
  });

  test('a page that frames /docs gets an empty frame, not the Authorize form', async () => {
    const page = await browser.newPage();
    await page.setContent(`<iframe src="${server.url}/docs/" width="800" height="600"></iframe>`);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame, 'the iframe exists');
    assert.equal(await frame.locator('#swagger-ui').count(), 0, `the frame shows ${frame.url()}`);
    await page.close();
  });
});
