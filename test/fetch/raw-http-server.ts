// A loopback TCP server that answers each request with bytes a test writes itself, for the answers
// Node's own HTTP server would never send: a 101, a 206 nobody asked for, non-ASCII headers,
// malformed framing, a connection cut mid-body.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** Writes the answer to one request; `path` is the request target, query included. */
export type RawAnswer = (socket: net.Socket, path: string) => void;

export interface RawHttpServer {
  /** http://127.0.0.1:PORT */
  origin: string;
  /** Resolves once no connection to this server is open: proof that a download let go of its socket. */
  allClosed(): Promise<void>;
  close(): Promise<void>;
}

export async function startRawHttpServer(answers: Record<string, RawAnswer>): Promise<RawHttpServer> {
  const sockets = new Set<net.Socket>();
  let waiters: Array<() => void> = [];
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      if (sockets.size > 0) return;
      for (const wake of waiters) wake();
      waiters = [];
    });
    socket.on('error', () => socket.destroy());
    let head = '';
    const onData = (data: Buffer): void => {
      head += data.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.resume();
      const path = head.split(' ')[1] ?? '/';
      const answer = answers[path.split('?')[0] ?? '/'];
      if (answer) answer(socket, path);
      else socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    allClosed: () => (sockets.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
