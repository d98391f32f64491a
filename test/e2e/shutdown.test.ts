// Stopping real `cutout serve` and `cutout worker` processes (SQLite, real model): a signal while
// a model pass runs, while the model loads, and a second signal. Each process exits 0 and the task
// it held is queued again without its attempt counted (README "More than one machine", docs/deploy.md
// "Stopping").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createAccount } from '../../src/store/accounts-repository.ts';
import { createApiKey } from '../../src/store/api-keys-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { startImageServer, type ImageServer } from '../support/image-server.ts';
import { startCutout, type CutoutProcess } from '../support/processes.ts';

describe('a stopping process exits 0 and hands its task back', () => {
  let images: ImageServer;
  let dataDir: string;
  let db: Db;
  let key: string;
  let env: Record<string, string>;
  const running: CutoutProcess[] = [];
  const held: http.ServerResponse[] = [];
  let photo: Buffer;

  before(async () => {
    photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 30, g: 120, b: 200 } } })
      .composite([{ input: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480"><circle cx="320" cy="240" r="150" fill="#c83"/></svg>') }])
      .png()
      .toBuffer();
    images = await startImageServer({
      '/photo.png': (res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(photo),
      // Never answered while the test runs: the task stays in its download.
      '/stalled.png': (res) => void held.push(res),
    });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-shutdown-'));
    db = await openDatabase({ dataDir });
    const account = await createAccount(db, { email: 'stop@example.test', plan: 'paid', credits: 50 });
    key = (await createApiKey(db, account.id, 'stop')).key;
    env = {
      CUTOUT_DATA_DIR: dataDir,
      CUTOUT_BOOTSTRAP: 'false',
      CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: 'true',
      CUTOUT_WORKER_POLL_MS: '100',
      CUTOUT_INFERENCE_THREADS: '1',
      CUTOUT_SIGNING_SECRET: 'shutdown-test-secret-0123456789abcdef',
    };
  });

  after(async () => {
    await Promise.all(running.map((p) => p.stop('SIGKILL')));
    for (const res of held.splice(0)) res.destroy();
    await db.destroy();
    await images.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async (args: string[], extra: Record<string, string>, ready?: Parameters<typeof startCutout>[3]): Promise<CutoutProcess> => {
    const p = await startCutout(`cutout ${args.join(' ')}`, args, { ...env, ...extra }, ready);
    running.push(p);
    return p;
  };

  async function create(api: CutoutProcess, image: string): Promise<string> {
    const res = await fetch(`${api.url}/api/v1/bg/removals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ image_url: `${images.url}/${image}`, precision: 'high' }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    return ((await res.json()) as { id: string }).id;
  }

  const taskRow = (id: string) => db.selectFrom('tasks').select(['status', 'attempts', 'lease_token']).where('id', '=', id).executeTakeFirstOrThrow();

  test('SIGTERM while a model pass runs: the task is released, the attempt not counted, and the process exits 0 (not 134)', async () => {
    // Grace 0: the task is released at once, with the pass still running in the inference thread.
    const server = await start(['serve'], { LOG_LEVEL: 'debug', CUTOUT_SHUTDOWN_GRACE_SECONDS: '0' });
    const id = await create(server, 'photo.png');
    await server.waitForLog((l) => l.msg === 'model pass started');
    assert.equal(await server.stop('SIGTERM'), 0, `stderr: ${server.logs.filter((l) => Number(l.level) >= 40).map((l) => l.msg).join('; ')}`);
    assert.ok(server.logs.some((l) => l.msg === 'shutdown grace period over; task released for another worker' && l.taskId === id));
    assert.deepEqual(await taskRow(id), { status: 'queued', attempts: 0, lease_token: null });
    await db.deleteFrom('tasks').where('id', '=', id).execute();
  });

  test('a second SIGTERM while the first waits for the model pass also waits for it, and the process exits 0', async () => {
    const server = await start(['serve'], { LOG_LEVEL: 'debug', CUTOUT_SHUTDOWN_GRACE_SECONDS: '0' });
    const id = await create(server, 'photo.png');
    await server.waitForLog((l) => l.msg === 'model pass started');
    server.child.kill('SIGTERM');
    await server.waitForLog((l) => l.msg === 'shutdown grace period over; task released for another worker');
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.deepEqual(await taskRow(id), { status: 'queued', attempts: 0, lease_token: null });
    await db.deleteFrom('tasks').where('id', '=', id).execute();
  });

  test('SIGTERM while the worker loads its model exits 0 with a log line', async () => {
    // Ready once the health port listens, which it does before the model loads.
    const worker = await start(['worker'], {}, (l) => typeof l.msg === 'string' && l.msg.startsWith('Server listening at'));
    assert.ok(!worker.logs.some((l) => l.msg === 'worker started'), 'the model is still loading');
    assert.equal(await worker.stop('SIGTERM'), 0);
    assert.ok(worker.logs.some((l) => l.msg === 'shutting down before startup finished'));
  });

  test('a second SIGINT releases the task in hand and exits at once, long before the grace period', async () => {
    const server = await start(['serve'], { CUTOUT_SHUTDOWN_GRACE_SECONDS: '3600' });
    const id = await create(server, 'stalled.png');
    await server.waitForLog((l) => l.msg === 'task claimed' && l.taskId === id);
    server.child.kill('SIGINT');
    await server.waitForLog((l) => l.msg === 'shutting down');
    server.child.kill('SIGINT');
    const code = await Promise.race([server.exited, new Promise((resolve) => setTimeout(resolve, 60_000, 'still running 60 s after the second signal'))]);
    assert.equal(code, 0);
    assert.deepEqual(await taskRow(id), { status: 'queued', attempts: 0, lease_token: null });
    await db.deleteFrom('tasks').where('id', '=', id).execute();
  });

  test('an API process finishes a request whose body is still arriving, closes idle keep-alive connections, and exits 0', async () => {
    const api = await start(['serve', '--no-worker'], { CUTOUT_SHUTDOWN_GRACE_SECONDS: '600' });
    const { port } = new URL(api.url);
    const connect = async (): Promise<{ socket: net.Socket; received: () => string; ended: Promise<void> }> => {
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      return { socket, received: () => text, ended };
    };
    // A keep-alive connection whose request is done: idle when the signal comes.
    const idle = await connect();
    const answered = new Promise((resolve) => idle.socket.once('data', resolve));
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await answered;
    const body = JSON.stringify({ image_url: `${images.url}/photo.png` });
    const slow = await connect();
    slow.socket.write(
      `POST /api/v1/bg/removals HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await api.waitForLog((l) => l.msg === 'incoming request' && (l.req as { method?: string } | undefined)?.method === 'POST');
    api.child.kill('SIGTERM');
    await api.waitForLog((l) => l.msg === 'shutting down');
    await idle.ended;
    slow.socket.write(body.slice(10));
    await slow.ended;
    assert.match(slow.received(), /^HTTP\/1\.1 202 Accepted\r\n/);
    assert.match(slow.received(), /\r\nconnection: close\r\n/i);
    const code = await Promise.race([api.exited, new Promise((resolve) => setTimeout(resolve, 60_000, 'still running 60 s after SIGTERM'))]);
    assert.equal(code, 0);
    const id = /"id":"(bgr_\w+)"/.exec(slow.received())?.[1];
    assert.ok(id);
    await db.deleteFrom('tasks').where('id', '=', id).execute();
  });
});
