// Undoes a Content-Encoding the server applied although the request asked for identity: a bucket
// object stored with "Content-Encoding: gzip" is served compressed to every client, and browsers
// show it, so refusing it would fail images that work everywhere else. The byte cap holds for the
// decoded image too, and zlib stops as soon as its output passes the cap: a small compressed body
// that expands to gigabytes (a decompression bomb) costs at most the cap in memory.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { TaskError } from '../domain/errors.ts';
import { firstMemberDeflate } from './first-gzip-member.ts';
import { tooLarge } from './http-get.ts';

type Decoder = (data: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>;

const inflate: Decoder = promisify(zlib.inflate);
const inflateRaw: Decoder = promisify(zlib.inflateRaw);
const brotliDecompress: Decoder = promisify(zlib.brotliDecompress);
const gunzipMembers: Decoder = promisify(zlib.gunzip);

// Every member, as gunzip reads them; when the bytes after the first member are no member (Node
// fails the body on them), the first member alone, as browsers read it. The deflate data ends
// itself, so inflating it stops there and leaves the rest unread.
const gunzip: Decoder = (data, options) =>
  gunzipMembers(data, options).catch((err: unknown) => {
    const deflate = firstMemberDeflate(data);
    if (deflate === undefined || isTooLarge(err)) throw err;
    return inflateRaw(deflate, options).catch(() => {
      throw err;
    });
  });

// A Map, not an object: the name comes from the remote server, and an object would answer
// `constructor` or `toString` with a function every object has.
const decoders = new Map<string, Decoder>([
  ['gzip', gunzip],
  ['x-gzip', gunzip],
  // RFC 9110's deflate is zlib-wrapped, but servers also send bare deflate data, which browsers take.
  ['deflate', (data, options) => (hasZlibHeader(data) ? inflate(data, options) : inflateRaw(data, options))],
  ['br', brotliDecompress],
]);

/**
 * The body as the server meant it; throws a TaskError for corrupt data. An encoding it does not
 * know (aws-chunked from an S3-compatible store, "none", a list of several) leaves the body as it
 * came, as browsers leave it: the image decoder judges those bytes, and an image still decodes.
 */
export async function decodeBody(contentEncoding: string | undefined, body: Buffer, maxBytes: number): Promise<Buffer> {
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  const decode = decoders.get(encoding);
  if (decode === undefined) return body;
  try {
    return await decode(body, { maxOutputLength: maxBytes });
  } catch (err) {
    if (isTooLarge(err)) throw tooLarge(maxBytes);
    throw new TaskError('image_download_failed', `The image server sent a compressed body (${encoding}) that could not be decompressed.`);
  }
}

function isTooLarge(err: unknown): boolean {
  return (err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE';
}

function hasZlibHeader(data: Buffer): boolean {
  const [cmf, flg] = data;
  return cmf !== undefined && flg !== undefined && (cmf & 0x0f) === 8 && ((cmf << 8) | flg) % 31 === 0;
}
