// Brute-force protection: too many failed sign-ins for one email, or from one address, within
// the window block further attempts (even with the right password) until old failures age out.
import type { Db } from '../store/database.ts';
import { clearFailures, countRecentFailures, recordSignInAttempt } from '../store/web-accounts-repository.ts';

export const signInWindowMs = 15 * 60_000;
/** One address may be a shared network, so it gets more room than one email. */
export const addressFactor = 10;

export class SignInThrottle {
  constructor(
    private readonly db: Db,
    private readonly maxFailures: number,
  ) {}

  /** Minutes to wait, or 0 when an attempt may be made now. */
  async blockedFor(email: string, ip: string, now = Date.now()): Promise<number> {
    const failures = await countRecentFailures(this.db, email, ip, now - signInWindowMs);
    if (failures.email >= this.maxFailures || failures.ip >= this.maxFailures * addressFactor) {
      return Math.ceil(signInWindowMs / 60_000);
    }
    return 0;
  }

  async record(email: string, ip: string, succeeded: boolean): Promise<void> {
    await recordSignInAttempt(this.db, { email, ip, succeeded });
    if (succeeded) await clearFailures(this.db, email);
  }
}
