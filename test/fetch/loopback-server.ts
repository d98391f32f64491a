// A throwaway HTTP server on 127.0.0.1 for the download tests: routes are plain handlers, and it
// records what reached it so a test can prove a refusal happened before any connection.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface LoopbackServer {
  port: number;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** Connections accepted so far. */
  connections: number;
  /** Request heads received so far, in order. */
  requests: http.IncomingMessage[];
  close(): Promise<void>;
}

export async function startLoopbackServer(routes: Record<string, Handler>): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    state.requests.push(req);
    const handler = routes[(req.url ?? '/').split('?')[0] ?? '/'];
    if (handler) handler(req, res);
    else res.writeHead(404).end('not found');
  });
  server.on('connection', (socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: LoopbackServer = {
    port,
    origin: `http://127.0.0.1:${port}`,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return state;
}
