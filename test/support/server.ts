// Starts the real service on an ephemeral loopback port with its own data folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createAccount } from '../../src/store/accounts-repository.ts';
import { createApiKey } from '../../src/store/api-keys-repository.ts';
import pino from 'pino';
import type { Engine } from '../../src/store/database.ts';
import { createTestDatabase } from './engines.ts';

export interface TestServer extends RunningServer {
  dataDir: string;
  engine: Engine;
  /** Creates an account and a key for it; a paid plan by default. */
  account(opts?: { plan?: 'free' | 'paid'; credits?: number }): Promise<{ accountId: string; key: string; keyId: string }>;
  request(pathname: string, init?: RequestInit & { key?: string }): Promise<Response>;
}

let seq = 0;

export async function startTestServer(
  env: Record<string, string> = {},
  options: { worker?: boolean; engine?: Engine; logger?: pino.Logger } = {},
): Promise<TestServer> {
  const engine = options.engine ?? 'sqlite';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-test-'));
  const database = engine === 'postgres' ? await createTestDatabase() : undefined;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    CUTOUT_DATA_DIR: dataDir,
    CUTOUT_BOOTSTRAP: 'false',
    // The test images are served from loopback, which the address check refuses by default.
    CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: 'true',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
  const server = await startServer(config, { worker: options.worker ?? false, logger: options.logger ?? pino({ level: 'silent' }), print: () => {} });
  return {
    ...server,
    dataDir,
    engine,
    async account(opts = {}) {
      seq += 1;
      const account = await createAccount(server.db, { email: `user${seq}-${Date.now()}@example.test`, plan: opts.plan ?? 'paid', credits: opts.credits ?? 100 });
      const key = await createApiKey(server.db, account.id, 'test');
      return { accountId: account.id, key: key.key, keyId: key.id };
    },
    request(pathname, init = {}) {
      const headers = new Headers(init.headers);
      if (init.key) headers.set('authorization', `Bearer ${init.key}`);
      return fetch(`${server.url}${pathname}`, { ...init, headers });
    },
    async close() {
      await server.close();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function createBody(body: unknown): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
