// A loopback TCP relay in front of a test server that can be shut, to make an outage of that
// server: while shut it resets every connection at once, as a store that went away does; while
// silent it accepts connections and never answers, as a store that hangs does; while frozen the
// connections already open stay open but carry nothing, as across a network partition, and what
// was sent meanwhile arrives once the gate opens again, as TCP retransmits it; stranded, the
// connections already open carry nothing ever again while new ones pass, as after a failover that
// moved the server to another machine; cut, the connections already open carry nothing ever again
// and neither end hears the other close, as when the machine at one end loses power or its network.
import net from 'node:net';

export interface TcpGate {
  port: number;
  /** Connections reset while the gate was shut. */
  readonly refused: number;
  shut(): void;
  silence(): void;
  freeze(): void;
  strand(): void;
  cut(): void;
  open(): void;
  close(): Promise<void>;
}

export async function startTcpGate(targetPort: number): Promise<TcpGate> {
  let mode: 'open' | 'shut' | 'silent' | 'frozen' = 'open';
  let refused = 0;
  const sockets = new Set<net.Socket>();
  /** Bytes held while frozen, each for the socket it was on its way to. */
  let held: [net.Socket, Buffer][] = [];
  const stranded = new WeakSet<net.Socket>();
  const severed = new WeakSet<net.Socket>();
  const relay = (from: net.Socket, to: net.Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (stranded.has(from) || severed.has(from)) return;
      if (mode === 'frozen') held.push([to, chunk]);
      else to.write(chunk);
    });
    from.on('end', () => {
      if (!severed.has(from)) to.end();
    });
  };
  const server = net.createServer((client) => {
    if (mode === 'shut') {
      refused += 1;
      client.resetAndDestroy();
      return;
    }
    if (mode === 'silent' || mode === 'frozen') {
      refused += 1;
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      client.on('error', () => client.destroy());
      client.resume();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        if (severed.has(socket)) return void socket.destroy();
        client.destroy();
        upstream.destroy();
      });
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get refused() {
      return refused;
    },
    shut() {
      mode = 'shut';
      for (const socket of sockets) socket.destroy();
    },
    silence() {
      mode = 'silent';
      for (const socket of sockets) socket.destroy();
    },
    freeze() {
      mode = 'frozen';
    },
    strand() {
      for (const socket of sockets) stranded.add(socket);
    },
    cut() {
      for (const socket of sockets) severed.add(socket);
    },
    open() {
      mode = 'open';
      for (const [to, chunk] of held) if (!to.destroyed) to.write(chunk);
      held = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
