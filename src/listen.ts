// Binding a process's HTTP port, for the API and for the worker's health port alike.
import type { FastifyInstance } from 'fastify';

/**
 * The port could not be had (in use, a HOST that does not resolve or is not this machine's). Its
 * message names the variables to change; its code is the system's (EADDRINUSE, EAI_AGAIN…), which
 * must not read as a database that cannot be reached, as a lookup failure otherwise would.
 */
export class ListenError extends Error {
  override name = 'ListenError';
  readonly code: string;

  constructor(host: string, portVariable: string, port: number, cause: unknown) {
    super(`cannot listen on HOST ${JSON.stringify(host)}, ${portVariable} ${port}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    const code = (cause as { code?: unknown }).code;
    this.code = typeof code === 'string' ? code : 'listen_failed';
  }
}

export async function listen(app: FastifyInstance, host: string, portVariable: string, port: number): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (err) {
    throw new ListenError(host, portVariable, port, err);
  }
}
