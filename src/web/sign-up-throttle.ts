// Sign-ups per client address (an IPv6 client's /64) and hour. Each new account gets free credits,
// and a sign-up with a taken email says so; without a limit a script could farm credits or test
// emails without end.
import { retryAfterSeconds } from '../domain/retry-after.ts';
import type { Db } from '../store/database.ts';
import { takeSignUpAttempt } from '../store/sign-up-attempts-repository.ts';
import { addressKey } from './address-key.ts';

export const signUpWindowMs = 60 * 60_000;

/** The sign-up may go ahead (it is already counted), or the seconds until the address may try again. */
export type SignUpTurn = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class SignUpThrottle {
  constructor(
    private readonly db: Db,
    private readonly perHour: number,
  ) {}

  async take(ip: string, now = Date.now()): Promise<SignUpTurn> {
    const outcome = await takeSignUpAttempt(this.db, { ip: addressKey(ip), limit: this.perHour, windowMs: signUpWindowMs }, now);
    if (outcome.allowed) return outcome;
    return { allowed: false, retryAfterSeconds: retryAfterSeconds(outcome.retryAt, now) };
  }
}
