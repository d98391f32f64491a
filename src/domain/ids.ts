import { randomFillSync } from 'node:crypto';

const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

// Every request gets a random id: drawing bytes from a pool filled 4 KiB at a time makes one
// system call per ~200 ids instead of one each. No byte is handed out twice.
const pool = Buffer.alloc(4096);
let used = pool.length;

/** A random base-36 string; 20 characters carry about 103 bits. */
export function randomToken(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    if (used === pool.length) {
      randomFillSync(pool);
      used = 0;
    }
    out += alphabet[pool[used++]! % 36];
  }
  return out;
}

const idPrefixes = ['bgr', 'acct', 'key'] as const;
export type IdPrefix = (typeof idPrefixes)[number];

const idTokenLength = 20;

/** Opaque ids with a type prefix, so a misplaced id is obvious in logs and support tickets. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken(idTokenLength)}`;
}

const idShapes = Object.fromEntries(
  idPrefixes.map((prefix) => [prefix, new RegExp(`^${prefix}_[${alphabet}]{${idTokenLength}}$`)]),
) as Record<IdPrefix, RegExp>;

/**
 * Whether a string has the shape newId gives. Anything else cannot name a row, so callers answer
 * "not found" without asking the database, which also keeps text PostgreSQL refuses (a NUL) away from it.
 */
export function isWellFormedId(prefix: IdPrefix, value: string): boolean {
  return idShapes[prefix].test(value);
}
