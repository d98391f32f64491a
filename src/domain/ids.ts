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
/** Base-36 digits of the creation time in epoch milliseconds: 9 reach the year 5138. */
const idTimeLength = 9;

/**
 * Ids with a type prefix, so a misplaced id is obvious in logs and support tickets. An id
 * begins with its creation time and ends with 11 random characters (about 57 bits), so ids made
 * one after another sort in that order and rows keyed by them are added at the end of their
 * indexes. With wholly random ids, each of a group commit's tasks went into a page of its own of
 * the tasks' id index and of the ledger's task index: 3.15 pages written to SQLite's log per
 * create instead of 1.64 (README, "Measured on Zen 3 at stop 52").
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(idTimeLength, '0')}${randomToken(idTokenLength - idTimeLength)}`;
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
