// Fixed one-minute windows per API key. This limiter holds them in this process's memory, which is
// the whole count when one process serves the API (the embedded SQLite mode); several processes on
// one PostgreSQL database share a count in the database instead (shared-rate-limiter.ts).
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms at which the current window ends. */
  resetAt: number;
}

export interface RateLimit {
  /** Counts one request of the key and says whether it is within the limit. */
  hit(key: string, now?: number): RateDecision | Promise<RateDecision>;
}

export function windowStart(now: number, windowMs: number): number {
  return now - (now % windowMs);
}

export function decide(count: number, limit: number, start: number, windowMs: number): RateDecision {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetAt: start + windowMs };
}

export class RateLimiter implements RateLimit {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private lastSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  hit(key: string, now = Date.now()): RateDecision {
    this.sweep(now);
    const start = windowStart(now, this.windowMs);
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return decide(window.count, this.limit, start, this.windowMs);
  }

  // Drops finished windows now and then, so keys that stopped calling don't pile up.
  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) {
      if (window.start + this.windowMs <= now) this.windows.delete(key);
    }
  }
}
