// Requests Node's HTTP parser refuses never reach Fastify's routes or hooks: a header block over the
// size limit, headers not finished in time, or bytes that are not HTTP (a control character in a
// header, two Content-Length headers). They are answered on the socket in the Error body with a
// request id of their own, logged, and keep the status Node would have sent; the code is
// invalid_request, since each is a malformed request.
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { errorBody } from './error-handler.ts';

interface ParserError extends Error {
  code?: string;
  reason?: string;
}

function statusAndMessage(err: ParserError): [number, string] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, `The request headers are larger than the ${http.maxHeaderSize / 1024} KB the server accepts.`];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'The chunk extensions of the request body are too large.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'The request was not received in time.'];
    default:
      return [400, `The HTTP request could not be parsed${err.reason ? `: ${err.reason}` : ''}.`];
  }
}

/** Fastify's clientErrorHandler option; Fastify calls it with the server instance as `this`. */
export function answerClientError(newRequestId: () => string) {
  return function clientErrorHandler(this: FastifyInstance, err: ParserError, socket: Socket): void {
    // A reset connection has nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = newRequestId();
    const [status, message] = statusAndMessage(err);
    this.log.info({ reqId: requestId, code: 'invalid_request', status, parserError: err.code }, message);
    // Bytes of an earlier response may be on their way on this connection; ours would corrupt them.
    const pending = (socket as Socket & { _httpMessage?: http.ServerResponse })._httpMessage;
    if (socket.writable && !pending?.headersSent) {
      const body = JSON.stringify(errorBody('invalid_request', message, requestId));
      socket.write(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}
