// The server's log as a test sees it: every entry pino writes, and a wait for the next one that
// matches.
import { Writable } from 'node:stream';

export interface LogEntry {
  level: number;
  msg: string;
  code?: string;
  reqId?: string;
  taskId?: string;
  status?: number;
  req?: { method?: string; url?: string };
}

/** Collects the server's log entries and tells a waiter when one it looks for arrives. */
export class LogCollector {
  readonly entries: LogEntry[] = [];
  private waiters: { match: (e: LogEntry) => boolean; resolve: (e: LogEntry) => void }[] = [];
  readonly stream = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as LogEntry;
        this.entries.push(entry);
        this.waiters = this.waiters.filter((w) => (w.match(entry) ? (w.resolve(entry), false) : true));
      }
      done();
    },
  });

  next(match: (e: LogEntry) => boolean): Promise<LogEntry> {
    const seen = this.entries.find(match);
    return seen ? Promise.resolve(seen) : new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}
