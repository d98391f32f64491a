#!/usr/bin/env node
// `cutout`: the server and the operator's commands, on the same data folder and environment.
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from '../store/database.ts';
import { startServer } from '../server.ts';
import { accountsCommand, creditsCommand } from './accounts.ts';
import { keysCommand } from './keys.ts';
import { CliError } from './output.ts';

const usage = `usage: cutout <command>
  serve [--no-worker]                 run the API (and by default an in-process worker)
  worker                              run a worker only (health and metrics on CUTOUT_METRICS_PORT)
  accounts create --email E [--plan free|paid] [--credits N] [--json]
  accounts show ID [--json]
  credits grant --account ID --amount N [--purchase] [--json]
  keys create --account ID [--name NAME] [--json]
  keys list --account ID [--json]
  keys delete KEY_ID [--json]
  remove FILE... --out-dir DIR [--subject auto|product|portrait|hair] [--precision standard|high] [--format png|webp]`;

async function serve(argv: string[]): Promise<void> {
  const unknown = argv.filter((a) => a !== '--no-worker');
  if (unknown.length > 0) throw new CliError(`unknown option ${unknown[0]}\n${usage}`, 2);
  const server = await startServer(loadConfig(), { worker: !argv.includes('--no-worker') });
  stopOnSignal(server.app.log, () => server.close());
}

async function worker(argv: string[]): Promise<void> {
  if (argv.length > 0) throw new CliError(`unknown option ${argv[0]}\n${usage}`, 2);
  const { startWorkerProcess } = await import('../worker/worker-process.ts');
  const running = await startWorkerProcess(loadConfig());
  stopOnSignal(running.health.log, () => running.close());
}

/** SIGTERM or SIGINT: stop taking work, let in-flight tasks finish within the grace period, exit 0. */
function stopOnSignal(log: { info: (obj: object, msg: string) => void; error: (obj: object, msg: string) => void }, close: () => Promise<unknown>): void {
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function withDatabase(fn: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<void>): Promise<void> {
  const config = loadConfig();
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: 2 });
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
      return withDatabase((db) => accountsCommand(db, rest));
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

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof CliError || err instanceof ConfigError) {
    process.stderr.write(`cutout: ${err.message}\n`);
    process.exit(err instanceof CliError ? err.exitCode : 1);
  }
  process.stderr.write(`cutout: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
