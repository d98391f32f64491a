// Preloaded into every test process (see package.json "test"). These machines flag any traffic
// to a non-loopback address, so a socket that would connect anywhere else is stopped before it
// opens, and the process is marked failed even if the code under test swallowed the error.
import net from 'node:net';
import dns from 'node:dns';

const violations: string[] = [];

function isLoopback(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  if (a === '::1' || a === 'localhost') return true;
  if (a.startsWith('::ffff:')) return isLoopback(a.slice(7));
  return net.isIPv4(a) && a.startsWith('127.');
}

function refuse(target: string): Error {
  const message = `loopback guard: a test tried to connect to ${target}`;
  violations.push(message);
  return new Error(message);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
type LookupFn = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

function guardedLookup(inner: LookupFn): LookupFn {
  return (hostname, options, callback) => {
    inner(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const bad = list.find((a) => !isLoopback(a));
      if (bad !== undefined) return callback(refuse(`${hostname} (${bad})`), address, family);
      callback(null, address, family);
    });
  };
}

const originalConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
  const first = args[0];
  let options: Record<string, unknown> | undefined;
  if (Array.isArray(first)) options = first[0] as Record<string, unknown>;
  else if (typeof first === 'object' && first !== null) options = first as Record<string, unknown>;
  else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    options = { port: first, host: typeof args[1] === 'string' ? args[1] : 'localhost' };
    args = [options, ...args.slice(typeof args[1] === 'string' ? 2 : 1)];
  }
  if (options && typeof options.path !== 'string') {
    const host = typeof options.host === 'string' ? options.host : 'localhost';
    if (net.isIP(host.replace(/^\[|\]$/g, ''))) {
      if (!isLoopback(host)) throw refuse(host);
    } else if (host !== 'localhost') {
      options.lookup = guardedLookup((options.lookup as LookupFn | undefined) ?? (dns.lookup as unknown as LookupFn));
    }
  }
  return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;

/** Returns and clears the refusals so far; for the guard's own test. */
export function takeViolations(): string[] {
  return violations.splice(0);
}

process.on('exit', () => {
  if (violations.length > 0) {
    process.stderr.write(`${violations.join('\n')}\n`);
    process.exitCode = 1;
  }
});
