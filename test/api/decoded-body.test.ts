// The decoder of a compressed request body, held to the body limit in memory as well as in bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PassThrough } from 'node:stream';
import zlib from 'node:zlib';
import { DecodedBody } from '../../src/api/plugins/decoded-body.ts';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a Brotli body is decoded only once it has all arrived, so a client that stalls after its first bytes holds no decoder', async () => {
  // A Brotli decoder takes the ring buffer the stream's first bytes ask for, up to 16 MB, and would
  // hold it for as long as a client takes over the rest of its body.
  const json = JSON.stringify({ image_url: 'https://example.com/photo.jpg' });
  const compressed = zlib.brotliCompressSync(Buffer.from(json));
  let bytesGivenBeforeTheEnd = 0;
  const source = new PassThrough();
  const body = new DecodedBody(source, 'br', 64 * 1024, () => {
    const decoder = zlib.createBrotliDecompress();
    const write = decoder.write.bind(decoder) as (chunk: Buffer) => boolean;
    decoder.write = ((chunk: Buffer) => {
      bytesGivenBeforeTheEnd += chunk.length;
      return write(chunk);
    }) as typeof decoder.write;
    return decoder;
  });
  const chunks: Buffer[] = [];
  body.on('data', (chunk: Buffer) => chunks.push(chunk));
  await nextTurn();
  source.write(compressed.subarray(0, 8));
  await nextTurn();
  assert.equal(bytesGivenBeforeTheEnd, 0, 'the decoder was fed before the body had all arrived');
  source.end(compressed.subarray(8));
  await new Promise((resolve, reject) => body.on('end', resolve).on('error', reject));
  assert.equal(Buffer.concat(chunks).toString(), json);
});

test('bytes that arrive after a deflate stream has ended are refused, not dropped', async () => {
  // The decoder stops at its stream's end; bytes in a later chunk never reach it.
  const json = JSON.stringify({ image_url: 'https://example.com/photo.jpg' });
  const source = new PassThrough();
  const body = new DecodedBody(source, 'deflate', 64 * 1024);
  body.resume();
  await nextTurn();
  source.write(zlib.deflateSync(Buffer.from(json)));
  await nextTurn();
  source.end(Buffer.from('more'));
  await assert.rejects(
    new Promise((resolve, reject) => body.on('end', resolve).on('error', reject)),
    (err: Error & { code?: string }) => err.code === 'invalid_request' && /not valid deflate/.test(err.message),
  );
});
