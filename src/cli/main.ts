#!/usr/bin/env node
// `cutout`: the server and the operator's commands, on the same data folder and environment.
import { ConfigError, loadConfig } from '../config.ts';
import { ListenError } from '../listen.ts';
import { openDatabase } from '../store/database.ts';
import { isDatabaseOutage } from '../store/database-outage.ts';
import { accountsCommand, creditsCommand } from './accounts.ts';
import { passwordCommand } from './passwords.ts';
import { keysCommand } from './keys.ts';
import type { Logger } from 'pino';
import { createLogger } from '../logger.ts';
import { CliError, reportError } from './output.ts';

const usage = `usage: cutout <command>
  serve [--no-worker]                 run the API (and by default an in-process worker)
  worker                              run a worker only (health and metrics on CUTOUT_METRICS_PORT)
  accounts create --email E [--plan free|paid] [--credits N] [--json]
  accounts show ID [--json]
  accounts set-password --email E [--json]   (the password on standard input)
  credits grant --account ID --amount N [--purchase] [--json]
  keys create --account ID [--name NAME] [--json]
  keys list --account ID [--json]
  keys delete KEY_ID [--json]
  remove FILE... --out-dir DIR [--subject auto|product|portrait|hair] [--precision standard|high] [--format png|webp]`;

async function serve(argv: string[]): Promise<void> {
  const unknown = argv.filter((a) => a !== '--no-worker');
  if (unknown.length > 0) throw new CliError(`unknown option ${unknown[0]}\n${usage}`, 2);
  const config = loadConfig();
  const logger = createLogger(config);
  const signals = stopOnSignal(logger);
  // Loaded on demand, like the worker's and the model's code: the operator's commands should not pay
  // for loading the HTTP stack.
  const { startServer } = await import('../server.ts');
  const server = await startServer(config, { worker: !argv.includes('--no-worker'), logger });
  signals.started({ close: () => server.close(), releaseHeld: async () => server.worker?.releaseHeld() });
}

async function worker(argv: string[]): Promise<void> {
  if (argv.length > 0) throw new CliError(`unknown option ${argv[0]}\n${usage}`, 2);
  const config = loadConfig();
  const logger = createLogger(config);
  const signals = stopOnSignal(logger.child({ role: 'worker' }));
  const { startWorkerProcess } = await import('../worker/worker-process.ts');
  const running = await startWorkerProcess(config, { logger });
  signals.started({ close: () => running.close(), releaseHeld: () => running.worker.releaseHeld() });
}

interface Stoppable {
  /** Stops taking work; in-flight tasks get the grace period, then are released. */
  close(): Promise<unknown>;
  /** Releases the tasks in hand at once. */
  releaseHeld(): Promise<unknown>;
}

/** The longest a stopping process waits for a model pass already running (see settleInference). */
const inferenceSettleMs = 30_000;

/**
 * SIGTERM or SIGINT: stop taking work, let in-flight tasks finish within the grace period, release
 * the rest, exit 0. The handlers are in place before startup: a signal while the model loads exits
 * 0 at once. A second signal releases the tasks in hand at once and exits. Either way the process
 * exits only once no model pass runs in the inference thread, since exiting under a running
 * onnxruntime aborts (exit code 134).
 */
function stopOnSignal(log: Logger): { started(target: Stoppable): void } {
  let target: Stoppable | undefined;
  let signals = 0;
  let settled: Promise<void> | undefined;
  const exit = async (code: number): Promise<never> => {
    // Every path waits for the same settling: a second signal during the first one's wait must not
    // exit under the running pass.
    settled ??= import('../vision/model.ts').then(async ({ settleInference }) => {
      if (!(await settleInference(inferenceSettleMs))) log.warn({ waitedMs: inferenceSettleMs }, 'a model pass is still running; exiting anyway');
    });
    await settled;
    // Exit codes are decided by the first path that gets here.
    process.exit(code);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (!target) {
      log.info({ signal }, 'shutting down before startup finished');
      void exit(0);
      return;
    }
    if (signals === 1) {
      log.info({ signal }, 'shutting down');
      target.close().then(
        () => exit(0),
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          return exit(1);
        },
      );
      return;
    }
    log.warn({ signal }, 'second signal: releasing the tasks in hand and exiting now');
    target.releaseHeld().then(
      () => exit(0),
      (err: unknown) => {
        log.error({ err }, 'releasing the tasks failed; they are taken over when their leases expire');
        return exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    started(running) {
      target = running;
    },
  };
}

async function withDatabase(fn: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<void>): Promise<void> {
  const config = loadConfig();
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: 2, queryTimeoutMs: config.databaseQueryTimeoutMs });
  try {
    await fn(db);
  } finally {
    await db.destroy();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'worker':
      return worker(rest);
    case 'accounts':
      return withDatabase((db) => (rest[0] === 'set-password' ? passwordCommand(db, rest.slice(1)) : accountsCommand(db, rest)));
    case 'credits':
      return withDatabase((db) => creditsCommand(db, rest));
    case 'keys':
      return withDatabase((db) => keysCommand(db, rest));
    case 'remove': {
      // Loaded on demand: the admin commands should not pay for the model runtime.
      const { removeCommand } = await import('./remove.ts');
      return removeCommand(loadConfig(), rest);
    }
    case undefined:
    case '--help':
    case 'help':
      process.stdout.write(`${usage}\n`);
      return;
    default:
      throw new CliError(`unknown command ${command}\n${usage}`, 2);
  }
}

const args = process.argv.slice(2);
main(args).catch((err: unknown) => {
  // --json asks the admin commands for one JSON object, a failure's included.
  const json = ['accounts', 'credits', 'keys'].includes(args[0] ?? '') && args.includes('--json');
  const known = describeFailure(err);
  if (known) {
    reportError(json, known.code, known.message);
    process.exit(known.exitCode);
  }
  if (json) reportError(true, 'internal_error', (err as Error).message ?? String(err));
  process.stderr.write(`cutout: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

/**
 * Failures an operator can act on without a stack trace: ours (a stable code and a message) and the
 * system's (ENOENT, EACCES, EADDRINUSE, ECONNREFUSED…: the message names the call and the path or
 * address). Anything else is a bug, and its stack is printed.
 */
function describeFailure(err: unknown): { code: string; message: string; exitCode: number } | undefined {
  if (err instanceof CliError) return { code: err.code, message: err.message, exitCode: err.exitCode };
  if (err instanceof ConfigError) return { code: 'invalid_configuration', message: err.message, exitCode: 1 };
  if (err instanceof ListenError) return { code: err.code, message: err.message, exitCode: 1 };
  // A file this user may not write (left by a command run as root) is no outage that passes.
  if (err instanceof Error && /^SQLITE_READONLY/.test(String((err as { code?: unknown }).code))) {
    return {
      code: 'database_read_only',
      message: `the database cannot be written (${err.message}): the data folder (CUTOUT_DATA_DIR) and the cutout.sqlite files in it must be writable by the user that runs cutout`,
      exitCode: 1,
    };
  }
  // A server holding SQLite's write lock past the busy timeout, or PostgreSQL going away mid-command:
  // nothing is wrong with the command, and running it again shortly may work.
  if (isDatabaseOutage(err)) {
    return { code: 'database_unavailable', message: `the database is busy or cannot be reached (${(err as Error).message}); try again shortly`, exitCode: 1 };
  }
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  // Our errors carry snake_case codes (signing_secret_invalid, database_unavailable, …).
  if (/^[a-z]+(_[a-z]+)+$/.test(code)) return { code, message: err.message, exitCode: 1 };
  if (/^E[A-Z]+$/.test(code)) return { code, message: err.message, exitCode: 1 };
  return undefined;
}
