// Fixed one-minute windows per API key, held in this process's memory.
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms at which the current window ends. */
  resetAt: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private lastSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  hit(key: string, now = Date.now()): RateDecision {
    this.sweep(now);
    const start = now - (now % this.windowMs);
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return {
      allowed: window.count <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - window.count),
      resetAt: start + this.windowMs,
    };
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
