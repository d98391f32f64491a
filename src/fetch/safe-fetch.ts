// Downloads a client-supplied image URL without letting the client reach inside the network:
// every hop's scheme and address is judged, the socket goes only to a judged address, and size
// and time are capped. Failures are TaskErrors whose messages are safe to show the client.
import type http from 'node:http';
import { TaskError } from '../domain/errors.ts';
import { headerText } from '../header-utf8.ts';
import { isPublicAddress, judgeUrl } from './address-policy.ts';
import { decodeBody } from './content-encoding.ts';
import { connectionFailure } from './download-failure.ts';
import { refuseNonImage } from './not-an-image.ts';
import { openResponse, readCapped } from './http-get.ts';
import { pinAddresses, systemResolve, type Resolver } from './pinned-address.ts';

export interface FetchOptions {
  maxBytes: number;
  /** Deadline for the whole download, redirects and DNS included. */
  timeoutMs: number;
  maxRedirects: number;
  /** CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: lifts the address check (never the scheme check); local testing only. */
  allowPrivateAddresses: boolean;
  /** Injectable DNS; defaults to dns.lookup with all answers. */
  resolve?: Resolver;
  /** Injectable address policy; defaults to isPublicAddress. */
  isAllowedAddress?: (ip: string) => boolean;
}

export interface FetchedImage {
  data: Buffer;
  contentType: string | undefined;
  finalUrl: string;
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
// Only these carry the whole file: 204 and 205 have no body, a 206 is a slice of it (nothing asked
// for a range), and the rest of 2xx are not a representation of the image at all.
const imageStatuses = new Set([200, 203]);

export async function fetchImage(url: string, options: FetchOptions): Promise<FetchedImage> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error('deadline')), options.timeoutMs);
  try {
    return await download(parseUrl(url), options, deadline.signal);
  } catch (err) {
    if (err instanceof TaskError) throw err;
    if (deadline.signal.aborted) {
      throw new TaskError('image_download_failed', `The image download timed out after ${options.timeoutMs} ms.`);
    }
    throw connectionFailure(err);
  } finally {
    clearTimeout(timer);
  }
}

async function download(start: URL, options: FetchOptions, signal: AbortSignal): Promise<FetchedImage> {
  const isAllowed = options.allowPrivateAddresses ? () => true : (options.isAllowedAddress ?? isPublicAddress);
  const resolve = options.resolve ?? systemResolve;
  const visited = new Set<string>();
  let url = start;
  for (let redirects = 0; ; redirects++) {
    visited.add(withoutHash(url));
    const addresses = await pinAddresses(judgeUrl(url, isAllowed), resolve, isAllowed, signal);
    const res = await openResponse(url, addresses, isAllowed, signal);
    const status = res.statusCode ?? 0;
    if (redirectStatuses.has(status)) {
      res.destroy();
      const next = redirectTarget(res, url);
      if (visited.has(withoutHash(next))) throw new TaskError('image_download_failed', 'The image URL redirects in a loop.');
      if (redirects >= options.maxRedirects) {
        throw new TaskError('image_download_failed', `The image URL redirects more than ${options.maxRedirects} times.`);
      }
      url = next;
      continue;
    }
    if (!imageStatuses.has(status)) {
      res.destroy();
      throw new TaskError('image_download_failed', `The image server answered with HTTP status ${status}.`);
    }
    const body = await readCapped(res, options.maxBytes, signal);
    const data = await decodeBody(res.headers['content-encoding'], body, options.maxBytes);
    refuseNonImage(res.headers['content-type'], data);
    return { data, contentType: res.headers['content-type'], finalUrl: url.href };
  }
}

function parseUrl(raw: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new TaskError('image_url_forbidden', 'The image URL is not a valid absolute URL.');
  }
}

function redirectTarget(res: http.IncomingMessage, from: URL): URL {
  const location = res.headers.location;
  if (location === undefined || location === '') {
    throw new TaskError('image_download_failed', `The image server answered with a ${res.statusCode} redirect but no Location.`);
  }
  try {
    // A raw non-ASCII path in Location means UTF-8: read as Latin-1, "/café.png" became "/cafÃ©.png".
    return new URL(headerText(location), from);
  } catch {
    throw new TaskError('image_download_failed', 'The image server redirected to an invalid URL.');
  }
}

function withoutHash(url: URL): string {
  return url.href.replace(/#.*$/, '');
}
