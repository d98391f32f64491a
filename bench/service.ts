// Shared by the service benches: the real service in a child process, and a loopback image server.
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Precision } from '../src/domain/removal-request.ts';
import type { ParentMessage, ServerMessage } from './api-server.ts';
import { withCheckoutAllocatorEnv } from './checkout-env.ts';

export type Report = Extract<ServerMessage, { kind: 'report' }>;
/** What the API benches load a server with. */
export type LoadKind = 'polls' | 'creates';

export async function startImageServer(photos: Buffer[]): Promise<{ origin: string; held: Set<http.ServerResponse>; close(): Promise<void> }> {
  const held = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    if (req.url === '/hold') {
      held.add(res); // answered never: the worker sits in its download, idle
      return;
    }
    // /photo/N serves the Nth photo (modulo their count).
    const photo = photos[Number(/\d+/.exec(req.url ?? '')?.[0] ?? 0) % photos.length]!;
    res.writeHead(200, { 'content-length': photo.length }).end(photo);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    held,
    close: () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export class ServerUnderTest {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly key: string,
  ) {}

  /** `checkout`: another checkout of this repository (its `npm ci` done) whose server runs instead of this one's. */
  static async start(overrides: Record<string, string> = {}, env: Record<string, string> = {}, checkout?: string): Promise<ServerUnderTest> {
    const script = checkout ? path.resolve(checkout, 'bench/api-server.ts') : new URL('./api-server.ts', import.meta.url);
    const child = fork(script, [JSON.stringify(overrides)], {
      ...(checkout && { cwd: path.resolve(checkout) }),
      execArgv: ['--import', 'tsx'],
      stdio: 'inherit',
      // The service as its checkout's `npm start` runs it: with that checkout's allocator settings unless overridden.
      env: await withCheckoutAllocatorEnv({ ...process.env, ...env }, checkout),
    });
    return new Promise((resolve, reject) => {
      child.once('message', (m: ServerMessage) => (m.kind === 'ready' ? resolve(new ServerUnderTest(child, m.url, m.key)) : reject(new Error('unexpected message'))));
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
  }

  send(message: ParentMessage): void {
    this.child.send(message);
  }

  report(): Promise<Report> {
    return new Promise((resolve) => {
      this.child.once('message', (m: ServerMessage) => m.kind === 'report' && resolve(m));
      this.send({ kind: 'report' });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.send({ kind: 'stop' });
    });
  }

  async create(imageUrl: string, precision?: Precision): Promise<string> {
    const res = await fetch(`${this.url}/api/v1/bg/removals`, { method: 'POST', headers: this.headers(), body: JSON.stringify({ image_url: imageUrl, ...(precision && { precision }) }) });
    if (res.status !== 202) throw new Error(`create answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  }

  /** The load generator's request for `kind`: a poll of the task `pollId`, or a create of a task for `imageUrl`. */
  loadRequest(kind: LoadKind, pollId: string, imageUrl: string): { url: string; method?: 'POST'; headers: Record<string, string>; body?: string } {
    const headers = this.headers();
    return kind === 'polls'
      ? { url: `${this.url}/api/v1/bg/removals/${pollId}`, headers }
      : { url: `${this.url}/api/v1/bg/removals`, method: 'POST', headers, body: JSON.stringify({ image_url: imageUrl }) };
  }

  headers(): Record<string, string> {
    return { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' };
  }
}

export async function untilDeadline(condition: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

