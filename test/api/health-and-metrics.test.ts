import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import sharp from 'sharp';
import { describeEachEngine } from '../support/engines.ts';
import { startImageServer, type ImageServer } from '../support/image-server.ts';
import { waitForFinal } from '../support/poll.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';

const metricValue = (text: string, series: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
};

describeEachEngine('health, readiness and metrics', (engine) => {
  let images: ImageServer;
  let server: TestServer;

  before(async () => {
    const png = await sharp({ create: { width: 20, height: 12, channels: 3, background: { r: 10, g: 200, b: 10 } } }).png().toBuffer();
    images = await startImageServer({ '/small.png': (res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(png) });
    server = await startTestServer({}, { engine });
  });
  after(async () => {
    await server.close();
    await images.close();
  });

  test('/healthz and /readyz answer without an API key; readiness names its checks', async () => {
    assert.deepEqual(await (await server.request('/healthz')).json(), { status: 'ok' });
    const ready = await server.request('/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', checks: { database: 'ok', storage: 'ok' } });
  });

  test('/metrics reports the queue depth by status and HTTP latency by route in Prometheus format', async () => {
    const { key } = await server.account();
    assert.equal((await server.request('/api/v1/bg/removals', { ...createBody({ image_url: `${images.url}/small.png` }), key })).status, 202);
    const res = await server.request('/metrics');
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.equal(metricValue(text, 'cutout_tasks{status="queued"}'), 1);
    assert.equal(metricValue(text, 'cutout_tasks{status="processing"}'), 0);
    assert.equal(metricValue(text, 'cutout_http_request_duration_seconds_count{method="POST",route="/api/v1/bg/removals",status_code="202"}'), 1);
  });

  test('a worker run is counted: task duration, stage times, credits charged and failures by code', async () => {
    const { key } = await server.account();
    const ok = ((await (await server.request('/api/v1/bg/removals', { ...createBody({ image_url: `${images.url}/small.png` }), key })).json()) as { id: string }).id;
    const bad = ((await (await server.request('/api/v1/bg/removals', { ...createBody({ image_url: `${images.url}/missing.png` }), key })).json()) as { id: string }).id;
    const { createWorker } = await import('../../src/worker/start-worker.ts');
    const { openResults } = await import('../../src/storage/open-results.ts');
    const pino = (await import('pino')).default;
    const worker = await createWorker(server.config, server.db, openResults(server.config), pino({ level: 'silent' }), server.metrics);
    // Three queued tasks (one from the previous test): run them one by one.
    while (await worker.runOnce());
    assert.equal((await waitForFinal(server, key, ok)).task.status, 'succeeded');
    assert.equal((await waitForFinal(server, key, bad)).task.status, 'failed');
    const text = await (await server.request('/metrics')).text();
    assert.equal(metricValue(text, 'cutout_credits_charged_total'), 2);
    assert.equal(metricValue(text, 'cutout_task_failures_total{code="image_download_failed"}'), 1);
    assert.equal(metricValue(text, 'cutout_task_duration_seconds_count{outcome="succeeded"}'), 2);
    assert.equal(metricValue(text, 'cutout_task_stage_seconds_count{stage="remove"}'), 2);
    assert.equal(metricValue(text, 'cutout_task_stage_seconds_count{stage="store"}'), 2);
    assert.equal(metricValue(text, 'cutout_tasks{status="queued"}'), 0);
  });
});

describe('metrics behind CUTOUT_METRICS_TOKEN', () => {
  const token = 'scrape-token-0123456789';
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_METRICS_TOKEN: token });
  });
  after(() => server.close());

  test('/metrics without the token, or with another one, gets 401 and names the scheme; with it, the metrics', async () => {
    for (const authorization of [undefined, 'Bearer scrape-token-0123456780', `Basic ${token}`, `Bearer ${token}x`]) {
      const res = await server.request('/metrics', { headers: authorization ? { authorization } : {} });
      assert.equal(res.status, 401, `authorization: ${authorization}`);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="metrics"');
      assert.doesNotMatch(await res.text(), /cutout_/);
    }
    const res = await server.request('/metrics', { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^cutout_tasks\{status="queued"\} 0$/m);
    // RFC 9110 §11.4: 1*SP between the scheme and the token.
    assert.equal((await server.request('/metrics', { headers: { authorization: `Bearer   ${token}` } })).status, 200);
  });

  test('the probes stay open: an orchestrator calls them without credentials', async () => {
    assert.equal((await server.request('/healthz')).status, 200);
    assert.equal((await server.request('/readyz')).status, 200);
  });
});

test('the probes log nothing below the process\'s own level: with LOG_LEVEL=error a failing readiness check prints no warning', async () => {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  const server = await startTestServer({}, { logger: pino({ level: 'error' }, stream) });
  try {
    fs.rmSync(path.join(server.dataDir, 'results'), { recursive: true, force: true });
    const ready = await server.request('/readyz');
    assert.equal(ready.status, 503);
    assert.deepEqual(((await ready.json()) as { checks: Record<string, string> }).checks.storage, 'failing');
    assert.deepEqual(lines.filter((l) => l.level < 50), []);
  } finally {
    await server.close();
  }
});
