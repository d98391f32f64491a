// Resolves a hostname once, judges every answer, and pins the connection to the judged addresses.
// Resolving again at connect time would open a DNS-rebinding gap: a name could answer with a
// public address for the check and a private one for the socket.
import dns from 'node:dns';
import net from 'node:net';
import { TaskError } from '../domain/errors.ts';
import { forbiddenHost, type FetchTarget } from './address-policy.ts';

export type Resolver = (hostname: string) => Promise<string[]>;

/** The judged addresses of one hop, never none. */
export type PinnedAddresses = [string, ...string[]];

export async function systemResolve(hostname: string): Promise<string[]> {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

/** Returns the addresses to connect to, in the resolver's order; throws a TaskError when the name cannot be used. */
export async function pinAddresses(
  target: FetchTarget,
  resolve: Resolver,
  isAllowed: (ip: string) => boolean,
  signal: AbortSignal,
): Promise<PinnedAddresses> {
  if (target.kind === 'address') return [target.address];
  let addresses: string[];
  try {
    addresses = await untilAborted(resolve(target.hostname), signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new TaskError('image_download_failed', `Could not resolve the image host ${target.hostname}.`);
  }
  const [first, ...rest] = addresses;
  if (first === undefined) throw new TaskError('image_download_failed', `Could not resolve the image host ${target.hostname}.`);
  // One bad answer refuses the whole name: an attacker controlling the zone picks which answer a
  // client would use, so "some answers are public" proves nothing.
  if (!addresses.every((address) => net.isIP(address) !== 0 && isAllowed(address))) throw forbiddenHost(target.hostname);
  return [first, ...rest];
}

/**
 * A `lookup` for http(s).request that answers with the pinned addresses and never asks DNS. With
 * autoSelectFamily (Node 20's default) net asks for all of them and tries each in turn, so a name
 * whose first address is down is reached on the next, as browsers and curl reach it.
 */
export function pinnedLookup(addresses: PinnedAddresses): net.LookupFunction {
  const answers = addresses.map((address) => ({ address, family: net.isIP(address) }));
  return (_hostname, options, callback) => {
    if (options.all) callback(null, answers);
    else callback(null, addresses[0], net.isIP(addresses[0]));
  };
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
