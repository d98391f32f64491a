// A loopback HTTP server that plays the part of the public web in tests: real fixture photos and
// the misbehaving responses a download must survive.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export const fixturesDir = path.resolve(process.env.CUTOUT_FIXTURES_DIR ?? path.join(import.meta.dirname, '../../../shared/fixtures'));

export function fixtureImage(name: string): Buffer {
  return fs.readFileSync(path.join(fixturesDir, 'images', name));
}

export interface ImageServer {
  url: string;
  close(): Promise<void>;
}

export async function startImageServer(extra: Record<string, (res: http.ServerResponse) => void> = {}): Promise<ImageServer> {
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const route = (req.url ?? '/').split('?')[0] ?? '/';
    const custom = extra[route];
    if (custom) return custom(res);
    if (route.startsWith('/fixtures/')) {
      const file = path.join(fixturesDir, 'images', path.basename(route));
      if (!fs.existsSync(file)) return res.writeHead(404).end('not found');
      const type = file.endsWith('.png') ? 'image/png' : 'image/jpeg';
      return res.writeHead(200, { 'content-type': type }).end(fs.readFileSync(file));
    }
    switch (route) {
      case '/text':
        return res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>not an image</body></html>');
      case '/vector.svg':
        return res
          .writeHead(200, { 'content-type': 'image/svg+xml' })
          .end('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="20" fill="red"/></svg>');
      case '/endless': {
        res.writeHead(200, { 'content-type': 'image/png' });
        const chunk = Buffer.alloc(64 * 1024, 7);
        const pump = (): void => {
          while (res.write(chunk)) {
            /* keep the socket buffer full */
          }
        };
        res.on('drain', pump);
        res.on('close', () => res.off('drain', pump));
        return pump();
      }
      case '/loop':
        return res.writeHead(302, { location: '/loop' }).end();
      default:
        return res.writeHead(404).end('not found');
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
