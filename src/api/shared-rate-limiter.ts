// The rate limit counted in the database, for PostgreSQL, where any number of API processes serve
// one database behind a load balancer: every request of a key counts once, whichever process takes
// it, at the cost of one round trip per request. Windows are the fixed minutes of each process's
// clock, so the processes' clocks should agree (NTP); a skew only moves where a minute ends.
import type { Db } from '../store/database.ts';
import { countRequest, deleteRateWindowsBefore } from '../store/rate-windows-repository.ts';
import { decide, windowStart, type RateDecision, type RateLimit } from './rate-limiter.ts';

export class SharedRateLimiter implements RateLimit {
  private sweptBefore = 0;

  constructor(
    private readonly db: Db,
    private readonly limit: number,
    private readonly onSweepError: (err: unknown) => void,
    private readonly windowMs = 60_000,
  ) {}

  async hit(key: string, now = Date.now()): Promise<RateDecision> {
    const start = windowStart(now, this.windowMs);
    const [count] = await Promise.all([countRequest(this.db, key, start), this.sweep(start)]);
    return decide(count, this.limit, start, this.windowMs);
  }

  // The first request of each minute in this process removes the windows older than the previous
  // minute, beside its own count. A sweep that fails is reported and tried again by the next
  // request; it never fails the request. The previous minute stays: a process whose clock lags a
  // little may still count in it.
  private async sweep(start: number): Promise<void> {
    const before = start - this.windowMs;
    if (before <= this.sweptBefore) return;
    const previous = this.sweptBefore;
    this.sweptBefore = before;
    try {
      await deleteRateWindowsBefore(this.db, before);
    } catch (err) {
      this.sweptBefore = previous;
      this.onSweepError(err);
    }
  }
}
