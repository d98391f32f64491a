// CUTOUT_TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For, -Proto and -Host are believed
// (Fastify's trustProxy, read by proxy-addr). An entry proxy-addr would read as another address than
// it looks ("10.1"), or one that would make Fastify throw while the app is built, is refused at start.
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

// proxy-addr's names for ranges: loopback (a proxy on the same machine), linklocal, and uniquelocal
// (the private ranges a container network or a cloud load balancer's subnet uses).
const rangeNames = ['loopback', 'linklocal', 'uniquelocal'];

function isTrustedProxy(entry: string): boolean {
  if (rangeNames.includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  // Only dotted-quad IPv4: ipaddr.js would also take "10.1" or "0xa.1", which read as other addresses.
  const bits = ipaddr.IPv4.isValidFourPartDecimal(address) ? 32 : ipaddr.IPv6.isValid(address) ? 128 : 0;
  if (bits === 0 || rest.length > 0) return false;
  // A /0 would trust every client to name its own address; proxy-addr refuses it too.
  return prefix === undefined || (/^[1-9][0-9]{0,2}$/.test(prefix) && Number(prefix) <= bits);
}

/** Comma-separated addresses, CIDR ranges and range names, each trimmed. */
export const trustedProxiesSchema = z.string().transform((value, ctx) => {
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries.filter((e) => !isTrustedProxy(e))) {
    ctx.issues.push({
      code: 'custom',
      input: value,
      message:
        entry === ''
          ? 'has an empty entry (a comma too many)'
          : `${JSON.stringify(entry)} is not an IP address, a CIDR range (such as 10.0.0.0/8) or one of ${rangeNames.join(', ')}`,
    });
  }
  return entries;
});
