// An IPv6 client is usually handed a whole /64, so the per-address sign-up and sign-in limits count
// a /64 as one address; an IPv4-mapped IPv6 address is its IPv4 address. The visitors' addresses
// come through a trusted proxy on 127.0.0.1 as X-Forwarded-For values: nothing leaves loopback.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachEngine } from '../support/engines.ts';
import type { TestServer } from '../support/server.ts';
import { forgetAttempts, signUps, startProxiedServer, visitor } from './proxied-visitors.ts';
import { uniqueEmail } from './web-client.ts';

describeEachEngine('per-address limits by IPv6 /64', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startProxiedServer(engine, '127.0.0.1');
  });
  after(async () => server.close());
  beforeEach(() => forgetAttempts(server));

  async function wrongPassword(address: string): Promise<number> {
    const client = visitor(server, address);
    await client.get('/sign-in');
    return (await client.post('/sign-in', { email: uniqueEmail(), password: 'not the password' })).response.status;
  }

  test('addresses in one IPv6 /64 share one sign-up allowance; another /64 has its own', async () => {
    assert.deepEqual(await signUps(server, ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:fffe', '2001:DB8:1:2:0:0:0:3']), [303, 303, 429]);
    assert.deepEqual(await signUps(server, ['2001:db8:1:3::1']), [303]);
  });

  test('an IPv4-mapped IPv6 address shares the allowance of its IPv4 address', async () => {
    assert.deepEqual(await signUps(server, ['203.0.113.9', '::ffff:203.0.113.9', '::ffff:cb00:7109']), [303, 303, 429]);
    assert.deepEqual(await signUps(server, ['203.0.113.10']), [303]);
  });

  test('failed sign-ins from addresses in one /64 count together; another /64 is not locked', async () => {
    for (let i = 1; i <= 10; i++) assert.equal(await wrongPassword(`2001:db8:66:1::${i.toString(16)}`), 401, `guess ${i}`);
    assert.equal(await wrongPassword('2001:db8:66:1:abcd::ffff'), 429);
    assert.equal(await wrongPassword('2001:db8:66:2::1'), 401);
  });
});
