// Requests sent only in part, as raw HTTP: the head and the start of a body that is announced longer
// than what follows, for tests of clients that stop, stall or cut the connection halfway. Each is a
// latin1 string: one character a byte, so binary data goes through as it is.
import zlib from 'node:zlib';
import type { WebClient } from '../web/web-client.ts';

/** An API create whose JSON body, announced at 1000 bytes, stops after its first field name. */
export function partialApiCreate(key: string): string {
  return (
    `POST /api/v1/bg/removals HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"image_url":'
  );
}

/** An API create whose gzip body, announced at 1000 bytes, stops after the gzip header. */
export function partialGzipApiCreate(key: string): string {
  const start = zlib.gzipSync('{"image_url":"https://images.example.test/photo.jpg"}').subarray(0, 10);
  return (
    `POST /api/v1/bg/removals HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 1000\r\n\r\n${start.toString('latin1')}`
  );
}

/** The web app's upload form with the client's cookies and form token, its photo announced at 100 KB and stopped after 2 KB. */
export function partialUpload(client: WebClient): string {
  const boundary = '----partial';
  return (
    `POST /app/removals HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${client.cookieHeader()}\r\n` +
    `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${client.csrf}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="photo.png"\r\nContent-Type: image/png\r\n\r\n${'x'.repeat(2000)}`
  );
}
