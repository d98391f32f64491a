// One GET over a fresh connection to a pinned address, and a body reader with a byte cap.
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import { TaskError } from '../domain/errors.ts';
import { forbiddenHost } from './address-policy.ts';
import { bodyCutShort } from './download-failure.ts';
import { pinnedLookup, type PinnedAddresses } from './pinned-address.ts';

const requestHeaders = {
  accept: 'image/*',
  'user-agent': 'Cutout/1.0',
  // Images are compressed already; a server that compresses anyway is decoded (content-encoding.ts).
  'accept-encoding': 'identity',
};

/**
 * Sends the request and resolves with the response head. The URL's own hostname stays in the Host
 * header and TLS servername; only the socket's destination comes from `addresses`.
 */
export function openResponse(url: URL, addresses: PinnedAddresses, isAllowed: (ip: string) => boolean, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request({
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: requestHeaders,
      lookup: pinnedLookup(addresses),
      // A pooled socket may have been opened for another answer; every hop gets a fresh one.
      agent: false,
      signal,
    });
    req.on('socket', (socket) => guardRemoteAddress(socket, url.hostname, addresses, isAllowed, (err) => req.destroy(err)));
    req.on('response', resolve);
    // A 101 arrives as 'upgrade', never as 'response', and without a listener Node closes the
    // socket and emits nothing at all: the download would wait forever, past its own deadline.
    // Settled like any other status that is not an image.
    req.on('upgrade', (res: http.IncomingMessage, socket: Socket) => {
      socket.destroy();
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

// Defence in depth: the lookup above already pins the address, so a mismatch means something
// between here and the kernel resolved on its own. Runs before the request bytes are flushed.
function guardRemoteAddress(socket: Socket, host: string, pinned: string[], isAllowed: (ip: string) => boolean, fail: (err: Error) => void): void {
  const check = (): void => {
    const remote = socket.remoteAddress;
    if (remote === undefined || !pinned.some((address) => sameAddress(remote, address)) || !isAllowed(remote)) fail(forbiddenHost(host));
  };
  if (socket.connecting) socket.prependOnceListener('connect', check);
  else check();
}

function sameAddress(a: string, b: string): boolean {
  return ipaddr.isValid(a) && ipaddr.isValid(b) && ipaddr.parse(a).toNormalizedString() === ipaddr.parse(b).toNormalizedString();
}

/** Reads the whole body as sent (still encoded), aborting the download as soon as it passes `maxBytes`. */
export async function readCapped(res: http.IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw tooLarge(maxBytes);
  }
  const onAbort = (): void => {
    res.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  };
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    // Leaving the loop early (the throw) destroys the stream and with it the connection.
    for await (const chunk of res as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, total);
  } catch (err) {
    // The deadline's abort is left for the caller to name.
    if (err instanceof TaskError || signal.aborted) throw err;
    throw bodyCutShort(err);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

export function tooLarge(maxBytes: number): TaskError {
  return new TaskError('image_too_large', `The image is larger than the ${maxBytes}-byte download limit.`);
}
