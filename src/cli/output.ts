// How every command reports: one JSON object with --json, readable lines otherwise. A failure is
// one JSON object too with --json, {"error":{"code","message"}} on stdout, and `cutout: <code>:
// <message>` on stderr otherwise; the exit code says which it is either way.
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
    /** Stable, for scripts: what went wrong, apart from the wording of the message. */
    readonly code = exitCode === 2 ? 'invalid_usage' : 'command_failed',
  ) {
    super(message);
  }
}

export function report(json: boolean, value: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/** A failure as the operator sees it: see the file's comment. */
export function reportError(json: boolean, code: string, message: string): void {
  if (json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
  // A system error's message names its code already ("EACCES: permission denied, mkdir …").
  else process.stderr.write(`cutout: ${message.includes(code) ? message : `${code}: ${message}`}\n`);
}

/** A warning that does not fail the command: always on stderr, so --json's stdout stays one object. */
export function warn(message: string): void {
  process.stderr.write(`cutout: warning: ${message}\n`);
}
