import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { takeViolations } from './loopback-guard.ts';

test('the test guard refuses a socket to a non-loopback address before it opens', () => {
  const socket = new net.Socket();
  assert.throws(() => socket.connect({ host: '10.1.2.3', port: 80 }), /loopback guard/);
  socket.destroy();
  assert.equal(takeViolations().length, 1);
});

test('the test guard refuses a hostname that resolves to a non-loopback address', async () => {
  const socket = net.connect({
    host: 'printer.example',
    port: 80,
    lookup: (_host, _opts, cb) => cb(null, [{ address: '192.168.1.9', family: 4 }] as never, 4),
  });
  const err = await new Promise<Error>((resolve) => socket.on('error', resolve));
  assert.match(err.message, /loopback guard/);
  assert.equal(takeViolations().length, 1);
});
