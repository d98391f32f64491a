// A store that stops answering, rather than refusing: the readiness probe must still answer, and
// soon, so that a load balancer takes the process out of rotation instead of waiting on it; liveness
// stays up (the process recovers on its own); and readiness is back once the store answers again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
import { postgresUrl } from '../support/engines.ts';
import { startGatedPostgresServer, type GatedPostgres } from '../support/gated-postgres.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.ts';

const imageUrl = 'https://images.example.test/photo.jpg';

/** Well past the probe's own bound, far short of the store's own timeouts: a hang fails the test. */
const probeAnswersWithinMs = 8000;

async function probe(server: TestServer, pathname: string): Promise<{ status: number; body: { status?: string; checks?: Record<string, string> } }> {
  const res = await server.request(pathname, { signal: AbortSignal.timeout(probeAnswersWithinMs) });
  return { status: res.status, body: (await res.json()) as { status?: string; checks?: Record<string, string> } };
}

describe('a PostgreSQL server that stops answering on the connections already open (a network partition)', { skip: postgresUrl ? false : 'CUTOUT_TEST_POSTGRES_URL is not set' }, () => {
  let gated: GatedPostgres;
  let gate: TcpGate;
  let server: TestServer;
  before(async () => {
    gated = await startGatedPostgresServer({ CUTOUT_DATABASE_QUERY_TIMEOUT_SECONDS: '1' });
    ({ gate, server } = gated);
  });
  after(() => gated.close());

  test('/readyz answers 503 naming the database within seconds, /healthz stays 200, and /readyz is 200 again once it answers', async () => {
    assert.equal((await probe(server, '/readyz')).status, 200);
    gate.freeze();
    try {
      const hung = await probe(server, '/readyz');
      assert.equal(hung.status, 503);
      assert.deepEqual(hung.body, { status: 'not_ready', checks: { database: 'failing', storage: 'ok' } });
      assert.equal((await probe(server, '/healthz')).status, 200);
    } finally {
      gate.open();
    }
    assert.deepEqual(await probe(server, '/readyz'), { status: 200, body: { status: 'ready', checks: { database: 'ok', storage: 'ok' } } });
  });

  test('/metrics answers within seconds, without the queue figure it cannot read', async () => {
    assert.equal((await server.request('/metrics')).status, 200);
    gate.freeze();
    try {
      const res = await server.request('/metrics', { signal: AbortSignal.timeout(probeAnswersWithinMs) });
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.match(text, /^cutout_process_resident_memory_bytes /m);
      assert.doesNotMatch(text, /^cutout_tasks\{/m);
    } finally {
      gate.open();
    }
    assert.match(await (await server.request('/metrics')).text(), /^cutout_tasks\{status="queued"\} 0$/m);
  });

  test('a create and a poll answer 503 service_unavailable within the query timeout instead of waiting on the connection, and work again once it answers', async () => {
    const { key } = await server.account({ credits: 10 });
    const created = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key });
    assert.equal(created.status, 202);
    const { id } = (await created.json()) as { id: string };
    gate.freeze();
    try {
      for (const [pathname, init] of [['/api/v1/bg/removals', createBody({ image_url: imageUrl })], [`/api/v1/bg/removals/${id}`, {}]] as const) {
        const res = await server.request(pathname, { ...init, key, signal: AbortSignal.timeout(probeAnswersWithinMs) });
        assert.equal(res.status, 503, pathname);
        assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'service_unavailable');
      }
    } finally {
      gate.open();
    }
    assert.equal((await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key })).status, 202);
    assert.equal((await server.request(`/api/v1/bg/removals/${id}`, { key })).status, 200);
  });

  test('a create that waits on a row another connection keeps locked is cancelled by the server at the timeout and answers 503', async () => {
    const { key, accountId } = await server.account({ credits: 10 });
    const holder = new pg.Client({ connectionString: gated.directUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from accounts where id = $1 for update', [accountId]);
      const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key, signal: AbortSignal.timeout(probeAnswersWithinMs) });
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'service_unavailable');
      await holder.query('rollback');
    } finally {
      await holder.end();
    }
    assert.equal((await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key })).status, 202);
  });
});

describe('a PostgreSQL server whose open connections are lost for good while new ones get through (a failover)', { skip: postgresUrl ? false : 'CUTOUT_TEST_POSTGRES_URL is not set' }, () => {
  let gated: GatedPostgres;
  before(async () => {
    gated = await startGatedPostgresServer({ CUTOUT_DATABASE_QUERY_TIMEOUT_SECONDS: '1', CUTOUT_DATABASE_POOL_SIZE: '3' });
  });
  after(() => gated.close());

  test('a poll that met a lost connection is answered 503, and the next ones reach the database on fresh connections', async () => {
    const { server, gate } = gated;
    const { key } = await server.account({ credits: 10 });
    const created = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key });
    assert.equal(created.status, 202);
    const { id } = (await created.json()) as { id: string };
    gate.strand();
    // Each connection that was open costs the one request that meets it, and no more: the pool
    // (3 connections here) opens fresh ones in their place.
    const polls: number[] = [];
    while (polls.length <= 3 && polls.at(-1) !== 200) {
      polls.push((await server.request(`/api/v1/bg/removals/${id}`, { key, signal: AbortSignal.timeout(probeAnswersWithinMs) })).status);
    }
    assert.equal(polls.at(-1), 200, polls.join(', '));
    assert.equal((await server.request(`/api/v1/bg/removals/${id}`, { key })).status, 200);
  });
});

describe('a bucket that accepts connections and never answers', () => {
  let s3: S3Server;
  let gate: TcpGate;
  let server: TestServer;
  before(async () => {
    s3 = await startS3Server();
    gate = await startTcpGate(Number(new URL(s3.endpoint).port));
    // The bucket's own timeout stays at its default (30 s, three attempts): the probe must not wait on it.
    server = await startTestServer({ ...s3.env, CUTOUT_S3_ENDPOINT: `http://127.0.0.1:${gate.port}` });
  });
  after(async () => {
    gate.open();
    await server.close();
    await gate.close();
    await s3.close();
  });

  test('/readyz answers 503 naming the storage within seconds, and 200 again once the bucket answers', async () => {
    assert.equal((await probe(server, '/readyz')).status, 200);
    gate.silence();
    try {
      const hung = await probe(server, '/readyz');
      assert.equal(hung.status, 503);
      assert.deepEqual(hung.body, { status: 'not_ready', checks: { database: 'ok', storage: 'failing' } });
    } finally {
      gate.open();
    }
    assert.equal((await probe(server, '/readyz')).status, 200);
  });

  test('the bucket check gives up at its own deadline, so probes leave no request waiting on the bucket', async () => {
    const store = new S3ResultStore(server.config.s3!, 3600);
    let timer: NodeJS.Timeout | undefined;
    gate.silence();
    try {
      const started = Date.now();
      const gaveUp = store.check(300).then(
        () => 'answered',
        () => 'gave up',
      );
      const stillWaiting = new Promise<string>((resolve) => {
        timer = setTimeout(resolve, probeAnswersWithinMs, 'still waiting');
      });
      assert.equal(await Promise.race([gaveUp, stillWaiting]), 'gave up');
      assert.ok(Date.now() - started < 2000, `gave up after ${Date.now() - started} ms`);
    } finally {
      clearTimeout(timer);
      gate.open();
      store.close();
    }
  });
});
