// The address policy is judged as a pure function: nothing here opens a socket, so public
// addresses can be named without ever being contacted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskError } from '../../src/domain/errors.ts';
import { isPublicAddress, judgeUrl } from '../../src/fetch/address-policy.ts';
import { forbiddenAddressUrls } from '../support/forbidden-urls.ts';

const refused: Array<[string, string]> = [
  ['127.0.0.1', 'IPv4 loopback'],
  ['127.255.255.254', 'the rest of 127/8'],
  ['10.0.0.1', 'private 10/8'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.255', 'the top of 172.16/12'],
  ['192.168.1.1', 'private 192.168/16'],
  ['169.254.169.254', 'cloud metadata (link-local)'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['0.0.0.0', 'IPv4 unspecified'],
  ['0.1.2.3', '"this network" 0/8'],
  ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'],
  ['240.0.0.1', 'reserved 240/4'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['192.0.2.1', 'documentation TEST-NET-1'],
  ['198.51.100.7', 'documentation TEST-NET-2'],
  ['203.0.113.9', 'documentation TEST-NET-3'],
  ['198.18.0.1', 'benchmarking'],
  ['::', 'IPv6 unspecified'],
  ['::1', 'IPv6 loopback'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback in hex'],
  ['::ffff:8.8.8.8', 'IPv4-mapped, even of a public address'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::a00:1', 'IPv4-compatible private'],
  ['::ffff:0:a00:1', 'SIIT-translated private'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of cloud metadata'],
  ['64:ff9b:1::a00:1', 'local-use NAT64'],
  ['2002:7f00:1::1', '6to4 of loopback'],
  ['2002:5db8:d822::1', '6to4 of a public address'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:2::1', 'IPv6 benchmarking'],
  ['2001:db8::1', 'IPv6 documentation'],
  ['fd00::1', 'unique-local fd00::/8'],
  ['fc00::1', 'unique-local fc00::/8'],
  ['fe80::1', 'IPv6 link-local'],
  ['fe80::1%eth0', 'IPv6 link-local with a zone'],
  ['fec0::1', 'deprecated site-local'],
  ['ff02::1', 'IPv6 multicast'],
  ['100::1', 'IPv6 discard prefix'],
];

const notAddresses = ['127.1', '2130706433', '0x7f.0.0.1', '0177.0.0.1', 'localhost', '', '[::1]', '1.2.3.4.5'];

const allowed = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '11.0.0.1', '2606:4700::1111', '2a00:1450:4001:82a::200e'];

describe('isPublicAddress', () => {
  for (const [ip, why] of refused) {
    it(`refuses ${ip} (${why})`, () => assert.equal(isPublicAddress(ip), false));
  }
  for (const text of notAddresses) {
    it(`refuses ${JSON.stringify(text)}, which is not a canonical IP address`, () => assert.equal(isPublicAddress(text), false));
  }
  for (const ip of allowed) {
    it(`allows the globally routable ${ip}`, () => assert.equal(isPublicAddress(ip), true));
  }
});

const forbiddenUrls = [
  ...forbiddenAddressUrls,
  'http://0x7f000001/',
  'http://localhost/',
  'http://LOCALHOST./',
  'https://api.localhost/',
];

function isCode(code: string) {
  return (err: unknown) => err instanceof TaskError && err.code === code;
}

describe('judgeUrl', () => {
  for (const url of forbiddenUrls) {
    it(`refuses ${url} as image_url_forbidden`, () => {
      assert.throws(() => judgeUrl(new URL(url), isPublicAddress), isCode('image_url_forbidden'));
    });
  }

  for (const url of ['ftp://example.com/a.png', 'file:///etc/passwd', 'data:image/png;base64,iVBORw0KGgo=', 'gopher://example.com/']) {
    it(`refuses the scheme of ${url} even when every address is allowed`, () => {
      assert.throws(() => judgeUrl(new URL(url), () => true), isCode('image_url_forbidden'));
    });
  }

  it('passes a public IPv4 literal through as the address to connect to', () => {
    assert.deepEqual(judgeUrl(new URL('https://93.184.216.34/a.png'), isPublicAddress), { kind: 'address', address: '93.184.216.34' });
  });

  it('passes a public IPv6 literal through without its brackets', () => {
    assert.deepEqual(judgeUrl(new URL('http://[2606:4700::1111]:8080/'), isPublicAddress), { kind: 'address', address: '2606:4700::1111' });
  });

  it('leaves an ordinary hostname to be resolved and judged later', () => {
    assert.deepEqual(judgeUrl(new URL('https://images.example.com/a.png'), isPublicAddress), { kind: 'hostname', hostname: 'images.example.com' });
  });

  it('lets localhost through to resolution when the policy allows loopback', () => {
    assert.deepEqual(judgeUrl(new URL('http://localhost:3000/'), () => true), { kind: 'hostname', hostname: 'localhost' });
  });
});
