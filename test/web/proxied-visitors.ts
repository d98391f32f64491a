// A web server behind a trusted proxy on 127.0.0.1 with tight per-address limits (two sign-ups an
// hour, one failed sign-in per email, so ten per address, in 15 minutes), and visitors whose
// addresses reach it only as X-Forwarded-For values: nothing leaves loopback.
import type { Engine } from '../../src/store/database.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

export function startProxiedServer(engine: Engine, trustedProxies: string): Promise<TestServer> {
  return startTestServer({ CUTOUT_TRUSTED_PROXIES: trustedProxies, CUTOUT_WEB_SIGN_UPS_PER_HOUR: '2', CUTOUT_WEB_SIGN_IN_MAX_FAILURES: '1' }, { engine });
}

/** Every test starts with fresh allowances. */
export async function forgetAttempts(server: TestServer): Promise<void> {
  await server.db.deleteFrom('sign_up_attempts').execute();
  await server.db.deleteFrom('sign_in_attempts').execute();
}

/** A browser whose requests the proxy forwards with this X-Forwarded-For. */
export function visitor(server: TestServer, forwardedFor: string): WebClient {
  return new WebClient(server.url, { 'x-forwarded-for': forwardedFor });
}

/** Sign-ups through the proxy, one after the other, each with the X-Forwarded-For given; their statuses. */
export async function signUps(server: TestServer, forwardedFor: string[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const value of forwardedFor) statuses.push((await visitor(server, value).signUp(uniqueEmail(), goodPassword)).status);
  return statuses;
}
