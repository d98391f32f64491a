// The web app end to end in a real browser (Debian's Chromium driven by playwright-core) against
// the real server, store, worker and model. Screenshots of every page go to artifacts/web/.
// A new account is on the free plan; the test gives it API access the way an operator would
// (a recorded credit purchase, here through the store) before using its key against the API.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import sharp from 'sharp';
import { grantCredits } from '../../src/store/accounts-repository.ts';
import { fixturesDir } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail } from './web-client.ts';

const chromiumPath = '/usr/bin/chromium';
const skip = fs.existsSync(chromiumPath) ? false : `${chromiumPath} is missing: install Debian's Chromium (apt-get install -y chromium) to run the browser test; CI installs it`;
const shots = path.resolve(import.meta.dirname, '../../artifacts/web');
const firstPhoto = path.join(fixturesDir, 'images', 'am-gt07.png');
const secondPhoto = path.join(fixturesDir, 'images', 'horse-285.png');

describe('the web app in a browser', { skip }, () => {
  let server: TestServer;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  const email = uniqueEmail();
  let apiKey = '';
  let firstTaskId = '';

  const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  const balance = () => page.getByTestId('balance').textContent();
  const api = (pathname: string) => fetch(`${server.url}${pathname}`, { headers: { authorization: `Bearer ${apiKey}` } });

  async function finishTask(label: string): Promise<string> {
    await page.waitForURL(/\/app\/tasks\/bgr_/);
    const stageBefore = await page.locator('[data-stage]').boundingBox();
    const controlsBefore = await page.locator('.viewer-controls').boundingBox();
    await shot(`${label}-running`);
    // The status line is read as the page updates it, until the result can be downloaded.
    const seen: string[] = [];
    const until = Date.now() + 180_000;
    while (Date.now() < until && (await page.locator('[data-download].disabled').count()) > 0) {
      const text = (await page.locator('[data-status-label]').textContent()) ?? '';
      const stage = text.split(':')[0] ?? '';
      if (seen.at(-1) !== stage) seen.push(stage);
      await page.waitForTimeout(100);
    }
    await page.locator('[data-download]:not(.disabled)').waitFor({ timeout: 1000 });
    assert.ok(seen.includes('Processing'), `the page showed the task processing (saw ${seen.join(' → ')})`);
    assert.match((await page.locator('[data-status-label]').textContent()) ?? '', /^Done in \d+ s$/);
    await page.waitForFunction(() => ((document.querySelector('[data-after]') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0);
    assert.deepEqual(await page.locator('[data-stage]').boundingBox(), stageBefore, 'the viewer does not move while the task runs');
    assert.deepEqual(await page.locator('.viewer-controls').boundingBox(), controlsBefore, 'the controls do not move while the task runs');
    return page.url().split('/').pop() ?? '';
  }

  async function download(): Promise<Buffer> {
    const [file] = await Promise.all([page.waitForEvent('download'), page.locator('[data-download]').click()]);
    return fs.readFileSync(await file.path());
  }

  before(async () => {
    fs.mkdirSync(shots, { recursive: true });
    server = await startTestServer({ CUTOUT_WEB_FREE_CREDITS: '3', CUTOUT_RATE_LIMIT_PER_MINUTE: '10000' }, { worker: true });
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1200, height: 900 },
      acceptDownloads: true,
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    page = context.pages()[0] ?? (await context.newPage());
  });
  after(async () => {
    await context?.close();
    await server?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
  });

  test('signs up and lands on the remove page with the free credits', async () => {
    await page.goto(`${server.url}/sign-up`);
    await shot('01-sign-up');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel(/^Password/).fill(goodPassword);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/app\/remove$/);
    assert.equal(await balance(), '3 credits');
    assert.match(await page.locator('main').textContent() ?? '', /previews of at most 0\.25 megapixels/);
    await shot('02-remove');
  });

  test('every control on the remove page has a label and is reached with the keyboard', async () => {
    for (const id of ['file', 'image_url', 'subject', 'precision', 'output_format']) {
      assert.equal(await page.locator(`label[for="${id}"]`).count(), 1, `a label for #${id}`);
    }
    const reached = new Set<string>();
    await page.locator('body').focus();
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab');
      reached.add(await page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent?.trim() || ''));
    }
    for (const id of ['file', 'image_url', 'subject', 'precision', 'output_format']) assert.ok(reached.has(id), `Tab reaches #${id}`);
    assert.ok([...reached].some((r) => r.startsWith('Remove background')), 'Tab reaches the submit button');
  });

  test('uploads a photo with the file chooser and downloads a free-plan preview cutout with alpha', async () => {
    await page.locator('#file').setInputFiles(firstPhoto);
    await page.getByRole('button', { name: /Remove background/ }).click();
    firstTaskId = await finishTask('03-task');
    await page.getByLabel('Black').check();
    await page.getByLabel('Before / after').fill('30');
    await shot('04-task-done');
    const png = sharp(await download());
    const meta = await png.metadata();
    assert.equal(meta.format, 'png');
    assert.equal(meta.channels, 4);
    assert.ok((meta.width ?? 0) * (meta.height ?? 0) <= 250_000, `a preview of at most 0.25 MP, got ${meta.width}×${meta.height}`);
    assert.ok(Math.abs((meta.width ?? 0) / (meta.height ?? 1) - 800 / 618) < 0.01, 'the aspect ratio is kept');
    const alpha = (await png.extractChannel(3).stats()).channels[0];
    assert.equal(alpha?.min, 0, 'the background is transparent');
    assert.equal(alpha?.max, 255, 'the subject is opaque');
    assert.equal(await balance(), '2 credits', 'a standard removal costs 1 credit');
  });

  test('creates an API key that is shown once, copies it, and the API needs access first', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    assert.match(await page.getByTestId('api-access').textContent() ?? '', /not enabled/);
    await page.getByLabel('Name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    apiKey = await page.getByTestId('new-key').inputValue();
    assert.match(apiKey, /^cut_[0-9a-z]{37}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), apiKey);
    await shot('05-key-created');

    await page.goto(`${server.url}/app/settings/keys`);
    assert.ok(!(await page.content()).includes(apiKey), 'the full key is never shown again');
    assert.equal(await page.getByTestId('new-key').count(), 0);
    assert.match(await page.getByTestId('key-row').textContent() ?? '', new RegExp(`ci\\s*${apiKey.slice(0, 12)}…`));

    const refused = await api(`/api/v1/bg/removals/${firstTaskId}`);
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'api_access_required');
  });

  test('after a credit purchase the key reads the web task through the API', async () => {
    const row = await server.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    await grantCredits(server.db, row.id, 10, true);
    const res = await api(`/api/v1/bg/removals/${firstTaskId}`);
    assert.equal(res.status, 200);
    const task = (await res.json()) as { status: string; usage: { credits: number }; input: { image_url: string }; output: { url: string } };
    assert.equal(task.status, 'succeeded');
    assert.deepEqual(task.usage, { credits: 1 });
    assert.match(task.input.image_url, new RegExp(`^${server.url}/app/uploads/upl_[0-9a-z]{24}$`));
    assert.equal((await fetch(task.output.url)).status, 200);

    await page.reload();
    assert.match(await page.getByTestId('api-access').textContent() ?? '', /enabled/);
    assert.doesNotMatch(await page.getByTestId('key-row').textContent() ?? '', /never/, 'the key shows when it was last used');
    assert.equal(await balance(), '12 credits');
    await shot('06-keys');
  });

  test('drops a photo on the page, high precision WebP, full resolution for an account with API access', async () => {
    await page.getByRole('link', { name: 'Remove a background' }).click();
    const bytes = fs.readFileSync(secondPhoto).toString('base64');
    const transfer = await page.evaluateHandle(({ data, name }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([Uint8Array.from(atob(data), (c) => c.charCodeAt(0))], name, { type: 'image/png' }));
      return dt;
    }, { data: bytes, name: path.basename(secondPhoto) });
    await page.locator('[data-dropzone]').dispatchEvent('drop', { dataTransfer: transfer });
    await page.getByText(`Selected: ${path.basename(secondPhoto)}`).waitFor();
    await page.getByLabel('Precision').selectOption('high');
    await page.getByLabel('Format').selectOption('webp');
    assert.match(await page.getByRole('button', { name: /Remove background/ }).textContent() ?? '', /2 credits/);
    await page.getByRole('button', { name: /Remove background/ }).click();
    await finishTask('07-task-high');
    await page.getByLabel('Colour', { exact: true }).check();
    await shot('08-task-high-done');
    const meta = await sharp(await download()).metadata();
    assert.equal(meta.format, 'webp');
    assert.equal(meta.hasAlpha, true);
    assert.equal(meta.width, 800);
    assert.equal(meta.height, 600);
    assert.equal(await balance(), '10 credits', 'high precision costs 2 credits');
  });

  test('history lists both tasks with thumbnails, and the ledger explains the balance', async () => {
    await page.getByRole('link', { name: 'History' }).click();
    const rows = page.getByTestId('history-row');
    assert.equal(await rows.count(), 2);
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('img.thumb')].every((img) => img.complete && img.naturalWidth > 0));
    assert.match(await rows.nth(0).textContent() ?? '', /Web[\s\S]*succeeded[\s\S]*2 charged[\s\S]*WEBP/);
    assert.match(await rows.nth(1).textContent() ?? '', /Web[\s\S]*succeeded[\s\S]*1 charged[\s\S]*PNG/);
    await shot('09-history');

    await page.getByRole('link', { name: 'Credits' }).click();
    assert.equal(await page.getByTestId('credits-available').textContent(), '10 credits');
    const ledger = (await page.getByTestId('ledger').textContent()) ?? '';
    for (const entry of ['Grant', 'Purchase', 'Reserved for a task', 'Charged for a task']) assert.ok(ledger.includes(entry), entry);
    assert.match(await page.locator('main').textContent() ?? '', /npx cutout credits grant/);
    await shot('10-credits');
  });

  test('fits a phone-sized screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, pathname] of [['11-phone-remove', '/app/remove'], ['12-phone-history', '/app/history'], ['13-phone-keys', '/app/settings/keys']] as const) {
      await page.goto(`${server.url}${pathname}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${pathname} scrolls sideways by ${overflow}px`);
      await shot(name);
    }
    await page.setViewportSize({ width: 1200, height: 900 });
  });

  test('deletes the key and the API refuses it', async () => {
    await page.goto(`${server.url}/app/settings/keys`);
    await page.getByRole('button', { name: 'Delete key ci' }).click();
    await page.getByText('The key was deleted.').waitFor();
    assert.equal(await page.getByTestId('key-row').count(), 0);
    const res = await api(`/api/v1/bg/removals/${firstTaskId}`);
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
    await shot('14-key-deleted');
  });

  test('signs out, and the app then asks to sign in', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in\?signed_out=1$/);
    await page.getByText('You are signed out.').waitFor();
    await shot('15-signed-out');
    await page.goto(`${server.url}/app/history`);
    assert.match(page.url(), /\/sign-in\?next=%2Fapp%2Fhistory$/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(goodPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/app\/history$/);
    await shot('16-signed-in-again');
  });
});
