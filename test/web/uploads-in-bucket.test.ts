// With results in a bucket, a browser upload goes to the bucket too, so a worker on another machine
// (here: another data folder) can read the image its task was created from.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import pino from 'pino';
import sharp from 'sharp';
import { loadConfig } from '../../src/config.ts';
import { openResults, type Results } from '../../src/storage/open-results.ts';
import { S3ResultStore } from '../../src/storage/s3-result-store.ts';
import { createWorker } from '../../src/worker/start-worker.ts';
import type { Worker } from '../../src/worker/worker.ts';
import { fixtureImage } from '../support/image-server.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

let s3: S3Server;
let server: TestServer;
let workerDir: string;
let workerResults: Results;
let worker: Worker;

before(async () => {
  s3 = await startS3Server();
  server = await startTestServer({ ...s3.env, CUTOUT_WEB_FREE_CREDITS: '2' }, { worker: false });
  workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-worker-'));
  const workerConfig = loadConfig({ ...s3.env, CUTOUT_DATA_DIR: workerDir, LOG_LEVEL: 'silent' });
  workerResults = openResults(workerConfig);
  worker = await createWorker(workerConfig, server.db, workerResults, pino({ level: 'silent' }));
});
after(async () => {
  workerResults.close();
  await server.close();
  await s3.close();
  fs.rmSync(workerDir, { recursive: true, force: true });
});

test('a web upload is stored in the bucket and a worker with another data folder processes it', async () => {
  const client = new WebClient(server.url);
  await client.signUp(uniqueEmail(), goodPassword);
  await client.get('/app/remove');
  const fields = { subject: 'auto', precision: 'standard', output_format: 'png', image_url: '' };
  const { response } = await client.post('/app/removals', fields, { name: 'toy.png', data: fixtureImage('am-gt07.png'), type: 'image/png' });
  assert.equal(response.status, 303);
  const taskId = (response.headers.get('location') ?? '').split('/').pop() ?? '';

  const source = await server.db.selectFrom('web_task_sources').selectAll().where('task_id', '=', taskId).executeTakeFirstOrThrow();
  assert.ok(source.upload_key);
  assert.equal(fs.existsSync(path.join(server.dataDir, 'uploads', source.upload_key)), false, 'nothing is kept on the API machine');
  const bucket = (workerResults.store as S3ResultStore).client;
  const object = await bucket.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `uploads/${source.upload_key}` }));
  assert.deepEqual(Buffer.from((await object.Body?.transformToByteArray()) ?? []), fixtureImage('am-gt07.png'));

  assert.equal(await worker.runOnce(), true);
  const status = JSON.parse((await client.get(`/app/tasks/${taskId}/status`)).body) as { status: string; result: { url: string } | null; error: unknown };
  assert.equal(status.status, 'succeeded', JSON.stringify(status.error));
  const url = new URL(status.result?.url ?? '');
  assert.equal(url.origin, s3.endpoint, 'the download link is presigned on the bucket');
  const meta = await sharp(Buffer.from(await (await fetch(url)).arrayBuffer())).metadata();
  assert.deepEqual([meta.format, meta.channels], ['png', 4]);

  // The history thumbnail is made by the API process from the object, not the full image.
  const cookie = client.cookieHeader();
  const thumbnail = await fetch(`${server.url}/app/tasks/${taskId}/thumbnail`, { headers: { cookie }, redirect: 'manual' });
  assert.deepEqual([thumbnail.status, thumbnail.headers.get('content-type')], [200, 'image/webp']);
  const small = await sharp(Buffer.from(await thumbnail.arrayBuffer())).metadata();
  assert.equal(Math.max(small.width ?? 0, small.height ?? 0), 96);
});
