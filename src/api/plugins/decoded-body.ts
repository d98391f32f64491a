// A compressed request body, decoded as it arrives (Brotli once it has all arrived, below) and held
// to the body limit on both sides: the bytes sent, and the bytes they decode to. Fastify counts what this stream yields too, but only
// as each decoded chunk reaches it: a body of empty deflate blocks yields nothing for it to count
// while the client goes on sending, and a small bomb would go on inflating after Fastify stopped
// listening. So the decoder itself is stopped at the limit, and the rest of the body is read and
// dropped, as Fastify leaves a plain body past the limit, so the connection can carry the answer.
import { Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { errorCodes } from 'fastify';
import { ApiError } from '../../domain/errors.ts';

export type Coding = 'gzip' | 'x-gzip' | 'deflate' | 'br';

/** A zlib decoder: it counts the bytes it took, which can be fewer than it was given. */
type Decoder = Transform & zlib.Zlib;

const decoders: Record<Coding, { create: () => Decoder; name: string }> = {
  gzip: { create: zlib.createGunzip, name: 'gzip' },
  'x-gzip': { create: zlib.createGunzip, name: 'gzip' },
  // RFC 9110's deflate is the zlib format (RFC 1950), which is what a client's zlib writes by default.
  deflate: { create: zlib.createInflate, name: 'deflate (the zlib format, RFC 1950)' },
  br: { create: zlib.createBrotliDecompress, name: 'Brotli' },
};

export class DecodedBody extends Readable {
  /** What Fastify compares with Content-Length: the bytes as sent. */
  receivedEncodedLength = 0;
  #decodedLength = 0;
  #started = false;
  readonly #decoder: Decoder;

  /** `createDecoder`: the coding's zlib decoder, or one a test watches. */
  constructor(
    private readonly source: Readable,
    private readonly coding: Coding,
    private readonly limit: number,
    createDecoder: () => Decoder = decoders[coding].create,
  ) {
    super();
    this.#decoder = createDecoder();
    // Fastify listens while it reads the body; an error after it has answered (and stopped
    // listening) has nobody left to tell, and must not take the process down as an unheard error.
    this.on('error', () => {});
  }

  // Nothing is read until Fastify reads the body: a request it refuses unread (a Content-Type no
  // parser takes) leaves the body to Node, as a plain one.
  override _read(): void {
    if (this.#started) this.#decoder.resume();
    else this.#start();
  }

  #start(): void {
    this.#started = true;
    const decoder = this.#decoder;
    this.source.on('data', (chunk: Buffer) => {
      this.receivedEncodedLength += chunk.length;
      if (this.receivedEncodedLength > this.limit) this.destroy(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    });
    // The same error object, so that a client that went away is still told apart (client-abort.ts).
    this.source.on('error', (err) => this.destroy(err));
    decoder.on('data', (chunk: Buffer) => {
      this.#decodedLength += chunk.length;
      if (this.#decodedLength > this.limit) this.destroy(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      else if (!this.push(chunk)) decoder.pause();
    });
    // A decoder stops at its stream's end and drops whatever follows (gzip reads on for another
    // member, but drops zero bytes), so a body with bytes after its stream would be read as one
    // thing here and perhaps another by whatever sent or passed it on. Once the decoder has ended
    // and been given the whole body, it must have taken every byte, or the body is refused.
    let decoded = false;
    let fed = false;
    const finish = (): void => {
      if (!decoded || !fed) return;
      if (decoder.bytesWritten < this.receivedEncodedLength) this.destroy(this.#notValid());
      else this.push(null);
    };
    decoder.on('end', () => {
      decoded = true;
      finish();
    });
    decoder.on('finish', () => {
      fed = true;
      finish();
    });
    decoder.on('error', () => this.destroy(this.#notValid()));
    if (this.coding !== 'br') {
      this.source.pipe(decoder);
      return;
    }
    // A Brotli decoder allocates the ring buffer its stream asks for (up to 16 MB) from the first
    // bytes, and would hold it for as long as the client takes to send the rest (up to the request
    // timeout): 16 bytes could pin 16 MB per request. So a Brotli body is decoded only once it has
    // all arrived (at most the limit, as a plain body is held), and its decoder lives for that only.
    const held: Buffer[] = [];
    this.source.on('data', (chunk: Buffer) => {
      if (!this.destroyed) held.push(chunk);
    });
    this.source.on('end', () => {
      if (!this.destroyed) decoder.end(Buffer.concat(held));
    });
  }

  #notValid(): ApiError {
    return new ApiError('invalid_request', `The request body is not valid ${decoders[this.coding].name} data, as its Content-Encoding says it is.`);
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.source.unpipe(this.#decoder);
    this.#decoder.destroy();
    this.source.resume();
    callback(err);
  }
}
