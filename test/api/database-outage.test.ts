// A database that cannot be reached, or is busy past its wait, is an outage, not a bug: the API
// answers 503 service_unavailable with Retry-After and the web app a page saying so, and both work
// again as soon as the database does. PostgreSQL is reached through a TCP gate that can be shut;
// SQLite is kept busy by another connection holding its write lock, as the CLI or a second process can.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { isDatabaseOutage } from '../../src/store/database-outage.ts';
import { postgresUrl } from '../support/engines.ts';
import { startGatedPostgresServer, type GatedPostgres } from '../support/gated-postgres.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import type { TcpGate } from '../support/tcp-gate.ts';
import { goodPassword, uniqueEmail, WebClient } from '../web/web-client.ts';

const imageUrl = 'https://images.example.test/photo.jpg';

/** What `statement` throws (undefined when it does not). */
function thrownBy(statement: () => unknown): unknown {
  try {
    statement();
  } catch (err) {
    return err;
  }
  return undefined;
}

async function expectUnavailable(res: Response): Promise<void> {
  const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.error.code, 'service_unavailable');
  assert.match(body.error.message, /database cannot be reached or is busy/);
  assert.equal(body.error.request_id, res.headers.get('x-request-id'));
  assert.equal(res.headers.get('retry-after'), '5');
}

describe('a PostgreSQL server that went away', { skip: postgresUrl ? false : 'CUTOUT_TEST_POSTGRES_URL is not set' }, () => {
  let gated: GatedPostgres;
  let gate: TcpGate;
  let server: TestServer;
  before(async () => {
    gated = await startGatedPostgresServer();
    ({ gate, server } = gated);
  });
  after(() => gated.close());

  test('creates and polls get 503 service_unavailable with Retry-After, and succeed once it is back', async () => {
    const { key } = await server.account({ credits: 10 });
    const created = (await (await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key })).json()) as { id: string };
    gate.shut();
    try {
      await expectUnavailable(await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key }));
      await expectUnavailable(await server.request(`/api/v1/bg/removals/${created.id}`, { key }));
    } finally {
      gate.open();
    }
    assert.equal((await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key })).status, 202);
    assert.equal((await server.request(`/api/v1/bg/removals/${created.id}`, { key })).status, 200);
  });

  test('a task id that cannot name a task (broken percent-encoding, over-long) gets 503 too, not an internal error', async () => {
    const { key } = await server.account({ credits: 10 });
    gate.shut();
    try {
      await expectUnavailable(await server.request('/api/v1/bg/removals/%ff', { key }));
      await expectUnavailable(await server.request(`/api/v1/bg/removals/${'a'.repeat(101)}`, { key }));
    } finally {
      gate.open();
    }
    assert.equal((await server.request('/api/v1/bg/removals/%ff', { key })).status, 404);
  });

  test("/metrics keeps answering while the database is gone: the process's own figures, without the queue it cannot read, which is back once the database is", async () => {
    gate.shut();
    try {
      const res = await server.request('/metrics');
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.match(text, /^cutout_http_request_duration_seconds_count\{/m);
      assert.match(text, /^cutout_process_resident_memory_bytes /m);
      assert.doesNotMatch(text, /^cutout_tasks\{/m, 'no queue figure the process could not read');
    } finally {
      gate.open();
    }
    assert.match(await (await server.request('/metrics')).text(), /^cutout_tasks\{status="queued"\} \d+$/m);
  });

  test('a signed-in page is a 503 page with Retry-After, and the next view after it is back works', async () => {
    const client = new WebClient(server.url);
    assert.equal((await client.signUp(uniqueEmail(), goodPassword)).status, 303);
    gate.shut();
    try {
      const { response, body } = await client.get('/app/history');
      assert.equal(response.status, 503);
      assert.equal(response.headers.get('retry-after'), '5');
      assert.match(response.headers.get('content-type') ?? '', /text\/html/);
      assert.match(body, /cannot reach its database or its storage just now/);
    } finally {
      gate.open();
    }
    assert.equal((await client.get('/app/history')).response.status, 200);
  });

  test('what PostgreSQL and its client say when the server is gone counts as an outage, a bad query does not', async () => {
    const client = new pg.Client({ connectionString: gated.directUrl });
    await client.connect();
    try {
      const syntax = await client.query('selec 1').catch((err: unknown) => err);
      assert.equal(isDatabaseOutage(syntax), false, String(syntax));
      await client.query('create table if not exists outage_probe (id int primary key)');
      await client.query('insert into outage_probe values (1) on conflict do nothing');
      const duplicate = await client.query('insert into outage_probe values (1)').catch((err: unknown) => err);
      assert.equal(isDatabaseOutage(duplicate), false, String(duplicate));
      // A write on a connection to a server that has become a standby, as after a failover (SQLSTATE 25006).
      await client.query('begin read only');
      const readOnly = await client.query('insert into outage_probe values (2)').catch((err: unknown) => err);
      await client.query('rollback');
      assert.equal(isDatabaseOutage(readOnly), true, String(readOnly));
      // The server ending this very connection, as a restart or failover does (SQLSTATE 57P01).
      const terminated = await client.query('select pg_terminate_backend(pg_backend_pid())').catch((err: unknown) => err);
      assert.equal(isDatabaseOutage(terminated), true, String(terminated));
    } finally {
      await client.end().catch(() => {});
    }
    gate.shut();
    try {
      const refused = await new pg.Client({ connectionString: gated.gatedUrl }).connect().catch((err: unknown) => err);
      assert.equal(isDatabaseOutage(refused), true, String(refused));
    } finally {
      gate.open();
    }
  });
});

describe('a SQLite file whose write lock another process holds', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  test('a create waits out the busy timeout and gets 503, polls still answer, and creates work once the lock is let go', async () => {
    const { key } = await server.account({ credits: 10 });
    const created = (await (await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key })).json()) as { id: string };
    const holder = new SQLite(path.join(server.dataDir, 'cutout.sqlite'));
    try {
      holder.exec('begin immediate');
      await expectUnavailable(await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key }));
      assert.equal((await server.request(`/api/v1/bg/removals/${created.id}`, { key })).status, 200);
      holder.exec('rollback');
      assert.equal((await server.request('/api/v1/bg/removals', { ...createBody({ image_url: imageUrl }), key })).status, 202);
    } finally {
      holder.close();
    }
  });

  test('what SQLite says about a locked file counts as an outage, a broken constraint does not', () => {
    const holder = new SQLite(path.join(server.dataDir, 'cutout.sqlite'));
    const other = new SQLite(path.join(server.dataDir, 'cutout.sqlite'), { timeout: 0 });
    try {
      holder.exec('begin immediate');
      const busy = thrownBy(() => other.exec('begin immediate'));
      assert.equal(isDatabaseOutage(busy), true, String(busy));
      holder.exec('rollback');
      other.exec('create temp table probe (id integer primary key); insert into probe values (1)');
      const duplicate = thrownBy(() => other.exec('insert into probe values (1)'));
      assert.equal(isDatabaseOutage(duplicate), false, String(duplicate));
    } finally {
      other.close();
      holder.close();
    }
  });
});
