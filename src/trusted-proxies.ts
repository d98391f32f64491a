// CUTOUT_TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For and -Proto are believed (Fastify's
// trustProxy, matched by proxy-addr). An entry proxy-addr would read as another address than it looks
// ("10.1"), one that would make Fastify throw while the app is built, or one that would trust other
// than it says is refused at start.
import proxyAddr from '@fastify/proxy-addr';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

// proxy-addr's names for ranges: loopback (a proxy on the same machine), linklocal, and uniquelocal
// (the private ranges a container network or a cloud load balancer's subnet uses).
const rangeNames = ['loopback', 'linklocal', 'uniquelocal'];

/** Why the entry cannot be a trusted proxy, or null when it can. */
function refusal(entry: string): string | null {
  if (entry === '') return 'has an empty entry (a comma too many)';
  if (rangeNames.includes(entry)) return null;
  const shown = JSON.stringify(entry);
  const [address = '', prefix, ...rest] = entry.split('/');
  // Only dotted-quad IPv4: ipaddr.js would also take "10.1" or "0xa.1", which read as other addresses.
  const bits = ipaddr.IPv4.isValidFourPartDecimal(address) ? 32 : ipaddr.IPv6.isValid(address) ? 128 : 0;
  if (bits === 0 || rest.length > 0) return `${shown} is not an IP address, a CIDR range (such as 10.0.0.0/8) or one of ${rangeNames.join(', ')}`;
  // proxy-addr matches IPv4 entries against IPv4-mapped peers itself; a mapped entry would be read
  // with ipaddr.js's looser IPv4 rules ("::ffff:0x7f.0.0.1"), and a mapped range can trust every
  // IPv4 client (::ffff:0.0.0.0/96) or, under /96, none.
  if (bits === 128 && (address.includes('.') || ipaddr.IPv6.parse(address).isIPv4MappedAddress())) {
    return `${shown} is an IPv6 form of an IPv4 address: write the IPv4 address or range itself`;
  }
  // A /0 would trust every client to name its own address; proxy-addr refuses it too.
  if (prefix !== undefined && !(/^[1-9][0-9]{0,2}$/.test(prefix) && Number(prefix) <= bits)) return `${shown} has a prefix length outside 1–${bits}`;
  return null;
}

/** Comma-separated addresses, CIDR ranges and range names, each trimmed. */
export const trustedProxiesSchema = z.string().transform((value, ctx) => {
  const entries = value.split(',').map((entry) => entry.trim());
  for (const message of new Set(entries.map(refusal))) if (message) ctx.issues.push({ code: 'custom', input: value, message });
  return entries;
});

// Some load balancers (Azure Application Gateway and Front Door by default) forward addresses as
// address:port.
const withPort = /^(?:\[([0-9a-fA-F:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):\d{1,5}$/;

/** A forwarded address without the port a load balancer may have added to it. */
export function withoutPort(forwarded: string): string {
  const match = withPort.exec(forwarded);
  return match ? (match[1] ?? match[2] ?? forwarded) : forwarded;
}

/**
 * Fastify's trustProxy for the entries. A listed proxy forwarded with its port (an outer proxy's
 * address as the next one appends it) is still listed: proxy-addr alone would stop there and take it
 * for the visitor, so every visitor behind it would share its address.
 */
export function trustedProxy(entries: string[]): (address: string, hop: number) => boolean {
  const listed = proxyAddr.compile(entries);
  return (address, hop) => listed(withoutPort(address), hop);
}
