// Retries a database call through a passing outage (a restart, a dropped connection) with a
// growing pause, until a deadline; the last error is thrown once the deadline has passed.
import { setTimeout as sleep } from 'node:timers/promises';

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
