import { randomBytes } from 'node:crypto';

const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A random base-36 string; 20 characters carry about 103 bits. */
export function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += alphabet[b % 36];
  return out;
}

export type IdPrefix = 'bgr' | 'acct' | 'key';

/** Opaque ids with a type prefix, so a misplaced id is obvious in logs and support tickets. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken(20)}`;
}
