// The tests' poll loop keeps to the rate limit it is told about, even when a 429 does not say how
// long to wait.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { retryDelay, waitForFinal } from './poll.ts';

const id = 'bgr_aaaaaaaaaaaaaaaaaaaa';
const succeeded = {
  id,
  object: 'bg.removal',
  model: 'bg-remover',
  status: 'succeeded',
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-01T00:00:01.000Z',
  input: { image_url: 'https://images.example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' },
  output: { url: null, expires_at: null, width: 3, height: 2, format: 'png' },
  usage: { credits: 1 },
  error: null,
};

// Answers 429 with the rate-limit headers but no Retry-After until the window it names has reset,
// then the finished task.
let polls = 0;
let resetSeconds = 0;
const server = http.createServer((_req, res) => {
  polls += 1;
  if (Date.now() < resetSeconds * 1000) {
    res.writeHead(429, { 'content-type': 'application/json', 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetSeconds) });
    res.end(JSON.stringify({ error: { code: 'rate_limit_exceeded', message: 'Too many requests.' } }));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(succeeded));
});
let url: string;
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('a poll answered 429 without Retry-After waits for the rate-limit window to reset instead of asking again at once', async () => {
  polls = 0;
  resetSeconds = Math.ceil(Date.now() / 1000) + 1;
  const { task } = await waitForFinal({ request: (pathname) => fetch(`${url}${pathname}`) }, 'key', id, 10_000);
  assert.equal(task.status, 'succeeded');
  assert.ok(polls <= 3, `${polls} polls while the window was spent`);
});

test('after a 429 the poll waits for its Retry-After, else until the window resets, else a second', () => {
  const now = Date.parse('2025-01-01T00:00:00.500Z');
  const reset = String(now / 1000 + 1.5);
  assert.equal(retryDelay(new Headers({ 'retry-after': '2', 'x-ratelimit-reset': reset }), now), 2000);
  assert.equal(retryDelay(new Headers({ 'x-ratelimit-reset': reset }), now), 1500);
  assert.equal(retryDelay(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT', 'x-ratelimit-reset': reset }), now), 1500);
  assert.equal(retryDelay(new Headers({ 'retry-after': '' }), now), 1000);
  assert.equal(retryDelay(new Headers({ 'x-ratelimit-reset': String(now / 1000 - 1) }), now), 1000);
});
