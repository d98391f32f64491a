// What the per-address limits (sign-ups, failed sign-ins) count under. An IPv6 client is usually
// handed a whole /64, so counting single addresses would let it start afresh from the next one; an
// IPv4 client owns one address at most. An IPv4-mapped IPv6 address (::ffff:1.2.3.4, as a dual-stack
// socket reports an IPv4 peer) is that IPv4 address. A port a load balancer added is the client's to
// change, so it is dropped.
import ipaddr from 'ipaddr.js';
import { withoutPort } from '../trusted-proxies.ts';

/** `2001:db8:1:2::/64` for any address in that /64, `192.0.2.7` for 192.0.2.7, ::ffff:192.0.2.7 and 192.0.2.7:5678. */
export function addressKey(forwarded: string): string {
  const ip = withoutPort(forwarded);
  // An IPv4 address is kept as it is, and so is anything that is not an address: request.ip holds
  // one only when a trusted proxy forwarded it, and the limits must still count it.
  if (!ipaddr.IPv6.isValid(ip)) return ip;
  const address = ipaddr.IPv6.parse(ip);
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
  return `${new ipaddr.IPv6([...address.parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}
