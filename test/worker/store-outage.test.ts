import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachEngine } from '../support/engines.ts';
import { startImageServer, type ImageServer } from '../support/image-server.ts';
import { waitForFinal } from '../support/poll.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.ts';

async function until(condition: () => boolean | Promise<boolean>, what: string, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise<void>((resolve) => setTimeout(resolve, 20));
  }
}

// The bucket is reached through a gate that the tests shut, as a bucket outage would.
describeEachEngine('a result store that does not answer (real model, s3rver behind a gate)', (engine) => {
  let s3: S3Server;
  let gate: TcpGate;
  let images: ImageServer;
  let server: TestServer;
  let key: string;
  let accountId: string;

  before(async () => {
    s3 = await startS3Server();
    gate = await startTcpGate(Number(new URL(s3.endpoint).port));
    images = await startImageServer();
    server = await startTestServer(
      { ...s3.env, CUTOUT_S3_ENDPOINT: `http://127.0.0.1:${gate.port}`, CUTOUT_LEASE_SECONDS: '5', CUTOUT_MAX_ATTEMPTS: '2', CUTOUT_RATE_LIMIT_PER_MINUTE: '100000', CUTOUT_S3_TIMEOUT_SECONDS: '1' },
      { worker: true, engine },
    );
    ({ key, accountId } = await server.account({ credits: 10 }));
  });
  after(async () => {
    await server.close();
    await images.close();
    await gate.close();
    await s3.close();
  });

  const create = async (): Promise<string> => {
    const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: `${images.url}/fixtures/horse-279.png` }), key });
    assert.equal(res.status, 202);
    return ((await res.json()) as { id: string }).id;
  };
  const attemptsOf = async (id: string) => (await server.db.selectFrom('tasks').select('attempts').where('id', '=', id).executeTakeFirstOrThrow()).attempts;

  test('a task whose result meets a short outage of the bucket succeeds on its first attempt once the bucket is back', async () => {
    gate.shut();
    const refusedBefore = gate.refused;
    const id = await create();
    // The cutout is made, then its upload is refused a few times before the bucket comes back.
    await until(() => gate.refused >= refusedBefore + 3, 'the upload was refused three times');
    gate.open();
    const { task } = await waitForFinal(server, key, id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    assert.equal(await attemptsOf(id), 1);
    const download = await fetch(task.output?.url ?? '');
    assert.equal(download.status, 200);
    await download.arrayBuffer();
  });

  test('a task whose result cannot be stored on any attempt fails with a message that says so, and is refunded', async () => {
    const available = async () => (await server.db.selectFrom('accounts').select('credits_available').where('id', '=', accountId).executeTakeFirstOrThrow()).credits_available;
    const before = await available();
    gate.shut();
    const id = await create();
    const { task } = await waitForFinal(server, key, id, 120_000);
    gate.open();
    assert.equal(task.status, 'failed');
    assert.equal(task.error?.code, 'processing_failed');
    assert.match(task.error?.message ?? '', /result store failed on each of the 2 attempts/);
    assert.equal(await attemptsOf(id), 2);
    assert.equal(await available(), before);
  });

  test('a bucket that accepts connections and never answers does not hold a task forever: it fails after its attempts, refunded', async () => {
    gate.silence();
    const id = await create();
    const { task } = await waitForFinal(server, key, id, 120_000);
    gate.open();
    assert.equal(task.status, 'failed');
    assert.match(task.error?.message ?? '', /result store failed on each of the 2 attempts/);
    assert.equal(await attemptsOf(id), 2);
  });
});
