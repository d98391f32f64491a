/**
 * The Retry-After seconds until `at`: rounded up, so a client that waits them is not refused again,
 * and at least 1, since 0 would invite a retry at once.
 */
export function retryAfterSeconds(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
