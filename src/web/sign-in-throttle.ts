// Brute-force protection: too many failed sign-ins for one email, or from one address (an IPv6
// client's /64), within the window block further attempts (even with the right password) until old
// failures age out.
import { retryAfterSeconds } from '../domain/retry-after.ts';
import type { Db } from '../store/database.ts';
import { markSignInSucceeded, takeSignInGuess } from '../store/web-accounts-repository.ts';
import { addressKey } from './address-key.ts';

export const signInWindowMs = 15 * 60_000;
/** One address may be a shared network, so it gets more room than one email. */
export const addressFactor = 10;

/** A guess to check (then `succeeded` once it proved right), or the seconds until one may be made. */
export type Guess = { allowed: true; succeeded: () => Promise<void> } | { allowed: false; retryAfterSeconds: number };

export class SignInThrottle {
  constructor(
    private readonly db: Db,
    private readonly maxFailures: number,
  ) {}

  /** Counts the guess as a failure before it is checked; see takeSignInGuess. */
  async guess(email: string, ip: string, now = Date.now()): Promise<Guess> {
    const outcome = await takeSignInGuess(
      this.db,
      { email, ip: addressKey(ip), emailLimit: this.maxFailures, ipLimit: this.maxFailures * addressFactor, windowMs: signInWindowMs },
      now,
    );
    if (!outcome.allowed) return { allowed: false, retryAfterSeconds: retryAfterSeconds(outcome.retryAt, now) };
    return { allowed: true, succeeded: () => markSignInSucceeded(this.db, { attemptId: outcome.attemptId, email }) };
  }
}
