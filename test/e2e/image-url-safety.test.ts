import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { findAccount } from '../../src/store/accounts-repository.ts';
import { waitForFinal } from '../support/poll.ts';
import { createBody, startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

// With the default address policy the service must refuse these without connecting anywhere; the
// loopback guard preloaded into this process fails the run if a socket to a non-loopback address opens.
const forbidden = [
  'http://127.1/a.png',
  'http://2130706433/a.png',
  'http://[::1]/a.png',
  'http://[::ffff:7f00:1]/a.png',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.1/a.png',
  'http://100.64.0.1/a.png',
  'http://192.168.0.10/a.png',
  'http://0.0.0.0/a.png',
  'http://localhost/a.png',
];

describeEachEngine('image URLs pointing inside the network', (engine) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: 'false', CUTOUT_RATE_LIMIT_PER_MINUTE: '100000', CUTOUT_MAX_ACTIVE_TASKS: '50' }, { worker: true, engine });
  });
  after(() => server.close());

  for (const url of forbidden) {
    test(`${url} is accepted as a request but the task fails with image_url_forbidden and is refunded`, async () => {
      const { key, accountId } = await server.account({ credits: 3 });
      const res = await server.request('/api/v1/bg/removals', { ...createBody({ image_url: url }), key });
      assert.equal(res.status, 202);
      const { id } = (await res.json()) as { id: string };
      const { task } = await waitForFinal(server, key, id);
      assert.equal(task.status, 'failed');
      assert.equal(task.error?.code, 'image_url_forbidden');
      assert.equal((await findAccount(server.db, accountId))?.creditsAvailable, 3);
    });
  }
});
