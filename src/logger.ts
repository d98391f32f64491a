// The process's JSON log, and what its lines may carry: nothing that opens anything to whoever
// reads the log (a log collector, a support ticket, a shared dashboard).
import pino, { type Logger, type SerializerFn } from 'pino';
import type { Config } from './config.ts';

/**
 * A request's URL without the values of its query parameters, their names kept: a result URL's
 * `signature` lets anyone download the file until it expires, and no query value is worth that risk.
 */
export function withoutQueryValues(url: string | undefined): string | undefined {
  const start = url?.indexOf('?') ?? -1;
  if (url === undefined || start < 0) return url;
  const names = url
    .slice(start + 1)
    .split('&')
    .map((pair) => pair.split('=', 1)[0]);
  return `${url.slice(0, start)}?${names.map((name) => `${name}=***`).join('&')}`;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  headers?: Record<string, string | string[] | undefined>;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** Fastify's own request fields (its serializer is replaced, not wrapped), the URL without query values. */
const req: SerializerFn = (request: LoggedRequest) => ({
  method: request.method,
  url: withoutQueryValues(request.url),
  version: request.headers?.['accept-version'],
  host: request.host,
  remoteAddress: request.ip,
  remotePort: request.socket?.remotePort,
});

/**
 * Fields of an S3 error that echo what the request was signed with: S3 answers a bad signature with
 * the access key id, the string it signed and the canonical request, whose signed headers include
 * a role's session token; the AWS SDK copies every field of that answer onto the error it throws.
 */
const echoedSigningFields = ['AWSAccessKeyId', 'StringToSign', 'StringToSignBytes', 'CanonicalRequest', 'CanonicalRequestBytes', 'SignatureProvided'];

/**
 * A serialised error without those fields, in the errors serialised inside it too (an
 * AggregateError's, an error-valued field). Only the serialiser's own fresh objects are changed,
 * never an object the error holds.
 */
function withoutSigningFields(serialized: unknown): unknown {
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  const serializedError = Object.getPrototypeOf(serialized) as object;
  const scrub = (fields: Record<string, unknown>): void => {
    for (const name of echoedSigningFields) delete fields[name];
    for (const value of Object.values(fields)) {
      for (const inner of Array.isArray(value) ? value : [value]) {
        if (typeof inner === 'object' && inner !== null && Object.getPrototypeOf(inner) === serializedError) scrub(inner as Record<string, unknown>);
      }
    }
  };
  scrub(serialized as Record<string, unknown>);
  return serialized;
}

// A value that is not error-like comes back from pino's serialiser as it is: the caller's own
// object, which may hold a cycle (pino's output handles those, a walk through it would not).
const err: SerializerFn = (error: unknown) => {
  const serialized = pino.stdSerializers.err(error as Error);
  return serialized === error ? serialized : withoutSigningFields(serialized);
};

export const logSerializers: Record<string, SerializerFn> = { req, err };

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'cutout' }, serializers: logSerializers });
}

/** A logger handed in from outside (tests, an embedding program) logs under the same rules. */
export function withLogSerializers(logger: Logger): Logger {
  return logger.child({}, { serializers: logSerializers });
}
