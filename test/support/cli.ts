import { spawn } from 'node:child_process';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Another user to run as: a test running as root then sees what a service user sees. */
  as?: { uid: number; gid: number };
  /** A command that runs node, such as `unshare -n` (no network but its own loopback). */
  within?: string[];
}

/** Runs the `cutout` command from source in a child process with the given environment (and standard input). */
export function runCli(args: string[], env: Record<string, string>, input?: string, options: RunOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const [command, ...prefix] = [...(options.within ?? []), process.execPath];
    const child = spawn(command!, [...prefix, '--import', 'tsx', path.join(repo, 'src/cli/main.ts'), ...args], {
      cwd: repo,
      ...options.as,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function json(run: CliRun): Record<string, unknown> {
  if (run.code !== 0) throw new Error(`cutout exited ${run.code}: ${run.stderr}`);
  const lines = run.stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one JSON line, got: ${run.stdout}`);
  return JSON.parse(lines[0] ?? '') as Record<string, unknown>;
}
