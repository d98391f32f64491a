// An IPv6 client is usually handed a whole /64, so the per-address sign-up and sign-in limits count
// a /64 as one address; an IPv4-mapped IPv6 address is its IPv4 address. The visitors' addresses
// come through a trusted proxy on 127.0.0.1 as X-Forwarded-For values: nothing leaves loopback.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachEngine } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

describeEachEngine('per-address limits by IPv6 /64', (engine) => {
  let server: TestServer;
  before(async () => {
    // Two sign-ups an hour, and one failed sign-in per email (so ten per address) in 15 minutes.
    server = await startTestServer(
      { CUTOUT_TRUSTED_PROXIES: '127.0.0.1', CUTOUT_WEB_SIGN_UPS_PER_HOUR: '2', CUTOUT_WEB_SIGN_IN_MAX_FAILURES: '1' },
      { engine },
    );
  });
  after(async () => server.close());
  beforeEach(async () => {
    await server.db.deleteFrom('sign_up_attempts').execute();
    await server.db.deleteFrom('sign_in_attempts').execute();
  });

  const visitor = (address: string) => new WebClient(server.url, { 'x-forwarded-for': address });

  async function signUps(addresses: string[]): Promise<number[]> {
    const statuses: number[] = [];
    for (const address of addresses) statuses.push((await visitor(address).signUp(uniqueEmail(), goodPassword)).status);
    return statuses;
  }

  async function wrongPassword(address: string): Promise<number> {
    const client = visitor(address);
    await client.get('/sign-in');
    return (await client.post('/sign-in', { email: uniqueEmail(), password: 'not the password' })).response.status;
  }

  test('addresses in one IPv6 /64 share one sign-up allowance; another /64 has its own', async () => {
    assert.deepEqual(await signUps(['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:fffe', '2001:DB8:1:2:0:0:0:3']), [303, 303, 429]);
    assert.deepEqual(await signUps(['2001:db8:1:3::1']), [303]);
  });

  test('an IPv4-mapped IPv6 address shares the allowance of its IPv4 address', async () => {
    assert.deepEqual(await signUps(['203.0.113.9', '::ffff:203.0.113.9', '::ffff:cb00:7109']), [303, 303, 429]);
    assert.deepEqual(await signUps(['203.0.113.10']), [303]);
  });

  test('failed sign-ins from addresses in one /64 count together; another /64 is not locked', async () => {
    for (let i = 1; i <= 10; i++) assert.equal(await wrongPassword(`2001:db8:66:1::${i.toString(16)}`), 401, `guess ${i}`);
    assert.equal(await wrongPassword('2001:db8:66:1:abcd::ffff'), 429);
    assert.equal(await wrongPassword('2001:db8:66:2::1'), 401);
  });
});
