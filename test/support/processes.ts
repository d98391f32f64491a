// Starts `cutout serve --no-worker` and `cutout worker` as real child processes from source, and
// follows their JSON logs: the tests learn ports, claims and shutdowns from what they print.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '../..');

// Children must not outlive this process, even when the test runner stops it on a timeout:
// orphaned workers would go on claiming tasks and eating the CPU of everything after them.
const live = new Set<ChildProcess>();
const killAll = (): void => {
  for (const child of live) child.kill('SIGKILL');
};
process.once('exit', killAll);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(1);
  });
}

export interface LogLine {
  msg?: string;
  taskId?: string;
  url?: string;
  healthPort?: number;
  [field: string]: unknown;
}

export interface CutoutProcess {
  name: string;
  child: ChildProcess;
  /** The API's base URL, or the worker's health and metrics URL. */
  url: string;
  logs: LogLine[];
  /** Resolves with the first log line (past or future) that matches. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Resolves with the exit code (or the signal that ended it). */
  exited: Promise<number | NodeJS.Signals>;
  stop(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals>;
}

/** `ready` is the log line that means started (default: listening, or the worker started). */
export async function startCutout(
  name: string,
  args: string[],
  env: Record<string, string>,
  ready: (line: LogLine) => boolean = (l) => l.msg === 'cutout is listening' || l.msg === 'worker started',
): Promise<CutoutProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'src/cli/main.ts'), ...args], {
    cwd: repo,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', CUTOUT_METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const logs: LogLine[] = [];
  const waiters = new Set<{ match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();
  let stderr = '';
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const text of lines) {
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text) as LogLine;
      logs.push(line);
      for (const w of [...waiters]) {
        if (w.match(line)) {
          waiters.delete(w);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));

  const waitForLog = (match: (line: LogLine) => boolean, timeoutMs = 120_000): Promise<LogLine> => {
    const seen = logs.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve: (l: LogLine) => (clearTimeout(timer), resolve(l)) };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`${name}: no matching log line within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`));
      }, timeoutMs);
      waiters.add(waiter);
      void exited.then((code) => {
        if (!waiters.has(waiter)) return;
        waiters.delete(waiter);
        clearTimeout(timer);
        reject(new Error(`${name} exited (${code}) before the expected log line; stderr: ${stderr.slice(-2000)}`));
      });
    });
  };

  const readyLine = await waitForLog(ready);
  const url = readyLine.url ?? `http://127.0.0.1:${readyLine.healthPort}`;
  return {
    name,
    child,
    url,
    logs,
    waitForLog,
    exited,
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
