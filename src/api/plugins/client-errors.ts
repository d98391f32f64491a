// Requests Node's HTTP parser refuses never reach Fastify's routes or hooks: a header block over the
// size limit, a request not received within the request timeout, or bytes that are not HTTP (a
// control character in a header, two Content-Length headers); nor does one whose Expect header Node
// cannot meet, nor a CONNECT. They are answered in the Error body, logged, and keep the status Node
// would have sent (a CONNECT, which Node left unanswered, gets 400); the code is invalid_request,
// since each is a malformed request. A request already under way (its body too slow) keeps its own
// request id, so the line an operator finds by the id the client quotes names it.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { markTimedOut, timedOutMessage } from './client-abort.ts';
import { errorBody } from './error-handler.ts';

interface ParserError extends Error {
  code?: string;
  reason?: string;
}

/** What Node keeps on a server socket: the request being parsed, and the response being written. */
type ServerSocket = Socket & { parser?: { incoming?: IncomingMessage | null } | null; _httpMessage?: http.ServerResponse | null };

const requestIds = new WeakMap<IncomingMessage, string>();

/** For an onRequest hook: the id Fastify gave the request, for a refusal that comes while its body arrives. */
export function rememberRequestId(raw: IncomingMessage, requestId: string): void {
  requestIds.set(raw, requestId);
}

function statusAndMessage(err: ParserError): [number, string] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, `The request headers are larger than the ${http.maxHeaderSize / 1024} KB the server accepts.`];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'The chunk extensions of the request body are too large.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, timedOutMessage];
    default:
      return [400, `The HTTP request could not be parsed${err.reason ? `: ${err.reason}` : ''}.`];
  }
}

/** Fastify's clientErrorHandler option; Fastify calls it with the server instance as `this`. */
export function answerClientError(newRequestId: () => string) {
  return function clientErrorHandler(this: FastifyInstance, err: ParserError, socket: ServerSocket): void {
    // A reset connection has nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const incoming = socket.parser?.incoming ?? undefined;
    const requestId = (incoming && requestIds.get(incoming)) ?? newRequestId();
    if (incoming && err.code === 'ERR_HTTP_REQUEST_TIMEOUT') markTimedOut(incoming);
    const [status, message] = statusAndMessage(err);
    const request = incoming ? { method: incoming.method, url: incoming.url } : undefined;
    this.log.info({ reqId: requestId, code: 'invalid_request', status, parserError: err.code, req: request }, message);
    // A request under way whose response is gone from the socket has been answered (a redirect
    // sent before its body was read); bytes of an earlier response may still be on their way. A
    // second answer would follow or corrupt them.
    const pending = socket._httpMessage;
    const answered = incoming ? !pending || pending.headersSent : pending?.headersSent === true;
    if (socket.writable && !answered) socket.write(rawAnswer(status, message, requestId));
    socket.destroy(err);
  };
}

/** The Error body as a whole HTTP response, for a socket no response object is left to write on. */
function rawAnswer(status: number, message: string, requestId: string): string {
  const body = JSON.stringify(errorBody('invalid_request', message, requestId));
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Node's checkExpectation event: an Expect header other than 100-continue. Without a listener Node
 * answers it 417 with an empty body before Fastify sees the request; it keeps that status here, with
 * the Error body and a request id like the parser's refusals.
 */
export function answerUnmetExpectation(newRequestId: () => string, log: FastifyBaseLogger) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const requestId = newRequestId();
    const message = 'The Expect header asks for something the server does not do: only "100-continue" is supported.';
    log.info({ reqId: requestId, code: 'invalid_request', status: 417, req: { method: request.method, url: request.url } }, message);
    const body = JSON.stringify(errorBody('invalid_request', message, requestId));
    response.writeHead(417, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': requestId });
    response.end(body);
  };
}

/**
 * Node's connect event: a CONNECT request, which asks for a tunnel as from a proxy. Without a
 * listener Node closes the connection without a word; this server is no proxy, so the request is
 * refused 400 with the Error body and a request id like the parser's refusals. Node has handed the
 * socket over, its request timeout and error listener gone with it: a reset would throw, and a
 * client keeping its side open would hold the connection for good, so it is closed once answered.
 */
export function answerConnect(newRequestId: () => string, log: FastifyBaseLogger) {
  return (request: IncomingMessage, socket: Duplex): void => {
    const requestId = newRequestId();
    const message = 'CONNECT is not supported: this server is not a proxy.';
    log.info({ reqId: requestId, code: 'invalid_request', status: 400, req: { method: request.method, url: request.url } }, message);
    socket.on('error', () => socket.destroy());
    socket.end(rawAnswer(400, message, requestId), () => socket.destroy());
  };
}
