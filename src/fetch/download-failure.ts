// The task errors for a download that broke on the wire. System and parser error codes
// (ECONNREFUSED, HPE_INVALID_CHUNK_SIZE, CERT_HAS_EXPIRED, ...) are safe to show and help the
// client; an error's message may carry internal detail, so it is left out.
import { TaskError } from '../domain/errors.ts';

/** Before the answer's head was read: no connection, a broken TLS handshake, or a head that is not HTTP. */
export function connectionFailure(err: unknown): TaskError {
  const code = errorCode(err);
  if (code === 'ECONNREFUSED') return new TaskError('image_download_failed', 'The image server refused the connection.');
  // llhttp's codes: the server answered, but with bytes that are not an HTTP response (or a head
  // over Node's 16 KB), which "the connection failed" would misdescribe.
  if (code?.startsWith('HPE_')) return new TaskError('image_download_failed', `The image server's answer is not valid HTTP (${code}).`);
  return new TaskError('image_download_failed', `The image could not be downloaded: the connection failed${code ? ` (${code})` : ''}.`);
}

/** After the head: the body stopped short (the server closed or reset the connection, or broke its framing). */
export function bodyCutShort(err: unknown): TaskError {
  const code = errorCode(err);
  return new TaskError('image_download_failed', `The image server's answer broke off before the whole image arrived${code ? ` (${code})` : ''}.`);
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : undefined;
}
