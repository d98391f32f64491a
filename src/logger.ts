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

export const logSerializers: Record<string, SerializerFn> = { req };

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'cutout' }, serializers: logSerializers });
}

/** A logger handed in from outside (tests, an embedding program) logs under the same rules. */
export function withLogSerializers(logger: Logger): Logger {
  return logger.child({}, { serializers: logSerializers });
}
