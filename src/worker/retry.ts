// Retries a database call through a passing outage (a restart, a dropped connection) with a
// growing pause, until a deadline; the last error is thrown once the deadline has passed.
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreUnavailableError } from '../domain/errors.ts';

export async function retryUntil<T>(fn: () => Promise<T>, deadline: number, onRetry: (err: unknown) => void): Promise<T> {
  let pauseMs = 100;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() + pauseMs > deadline) throw err;
      onRetry(err);
      await sleep(pauseMs);
      pauseMs = Math.min(pauseMs * 2, 2000);
    }
  }
}

/**
 * A call to the service's own storage, retried through an outage until the deadline; a failure
 * past it is a StoreUnavailableError (`what` names the store), which gives the attempt back.
 */
export function retryStoreUntil<T>(what: string, fn: () => Promise<T>, deadline: number, onRetry: (err: unknown) => void): Promise<T> {
  return retryUntil(fn, deadline, onRetry).catch((err: unknown) => {
    throw new StoreUnavailableError(what, err);
  });
}
