// What the service may fetch. Image URLs come from clients, so every address is judged against an
// allow-list: only globally routable unicast passes. Anything else (loopback, private, link-local
// cloud metadata, CGNAT, documentation ranges, and IPv6 forms that embed an IPv4 address and could
// smuggle one of those) is refused, so a new kind of special range is refused by default.
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { TaskError } from '../domain/errors.ts';

// 2000::/3 is the only IPv6 block IANA hands out as global unicast; everything outside it
// (::/96 IPv4-compatible, ::ffff:0:0/96 mapped, 64:ff9b::/96 NAT64, fc00::/7, fe80::/10, ff00::/8)
// is refused before ipaddr.js names the finer ranges inside it (6to4, Teredo, documentation, ...).
const globalUnicastV6 = ipaddr.IPv6.parseCIDR('2000::/3');

export function isPublicAddress(ip: string): boolean {
  // net.isIP accepts only canonical dotted-quad and RFC 4291 text; ipaddr.js alone would also take
  // shorthand such as "127.1" or "0x7f.1", which must never reach a connect call unjudged.
  if (net.isIP(ip) === 0) return false;
  const address = ipaddr.parse(ip);
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const v6 = address as ipaddr.IPv6;
  // A zone id only makes sense for link-local and site-scoped addresses.
  if (v6.zoneId !== undefined) return false;
  return v6.match(globalUnicastV6) && v6.range() === 'unicast';
}

/** Where a URL points: an IP literal to judge now, or a hostname to resolve and judge. */
export type FetchTarget = { kind: 'address'; address: string } | { kind: 'hostname'; hostname: string };

/**
 * Judges a parsed URL before anything is resolved or connected. WHATWG URL parsing has already
 * normalised IPv4 shorthand ("127.1", "2130706433") to dotted-quad and bracketed IPv6 hosts.
 * Throws image_url_forbidden for other schemes and for disallowed literals or loopback names.
 */
export function judgeUrl(url: URL, isAllowed: (ip: string) => boolean): FetchTarget {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TaskError('image_url_forbidden', `Only http and https image URLs are allowed, not ${url.protocol.slice(0, -1)}.`);
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (net.isIP(host) !== 0) {
    if (!isAllowed(host)) throw forbiddenHost(url.hostname);
    return { kind: 'address', address: host };
  }
  // RFC 6761 reserves these names for loopback, so they are judged as 127.0.0.1 without asking DNS;
  // a policy that admits loopback (private addresses allowed) lets them resolve normally.
  if (isLoopbackName(host) && !isAllowed('127.0.0.1')) throw forbiddenHost(url.hostname);
  return { kind: 'hostname', hostname: host };
}

export function forbiddenHost(host: string): TaskError {
  return new TaskError('image_url_forbidden', `The image host ${host} points to an address the service may not fetch.`);
}

function isLoopbackName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
