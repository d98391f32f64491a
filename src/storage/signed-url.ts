// Result URLs carry their own authorisation: an expiry and an HMAC over key and expiry.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { linkLifetimeSeconds, type ResultLink, type ResultLinks } from './result-store.ts';

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

/** Links to this service's own download route, for results kept on local disk. */
export class ResultUrlSigner implements ResultLinks {
  constructor(
    private readonly secret: Buffer,
    private readonly baseUrl: () => string,
    private readonly ttlSeconds: number,
  ) {}

  private signature(key: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest('base64url');
  }

  sign(key: string, now = Date.now(), deletedAt?: number): { url: string; expiresAt: number } {
    const expires = Math.floor(now / 1000) + linkLifetimeSeconds(this.ttlSeconds, now, deletedAt);
    const query = new URLSearchParams({ expires: String(expires), signature: this.signature(key, expires) });
    return { url: `${this.baseUrl()}/api/v1/results/${key}?${query}`, expiresAt: expires * 1000 };
  }

  async link(key: string, now = Date.now(), deletedAt?: number): Promise<ResultLink> {
    return this.sign(key, now, deletedAt);
  }

  verify(key: string, expires: string | undefined, signature: string | undefined, now = Date.now()): SignatureCheck {
    // Only the decimal that sign writes: with leading zeros allowed, one link had many spellings.
    if (!expires || !signature || !/^(?:0|[1-9]\d{0,11})$/.test(expires)) return 'invalid';
    const expected = Buffer.from(this.signature(key, Number(expires)));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'valid';
  }
}

const secretBytes = 32;

export class SigningSecretError extends Error {
  readonly code = 'signing_secret_invalid';
}

/**
 * The secret comes from CUTOUT_SIGNING_SECRET, or is made once and kept in the data folder, so
 * URLs survive restarts and every process sharing the folder signs alike.
 */
export function loadSigningSecret(dataDir: string, configured: string | undefined): Buffer {
  if (configured) return Buffer.from(configured);
  const file = path.join(dataDir, 'signing-secret');
  return readSecret(file) ?? createSecret(dataDir, file);
}

/** Undefined when there is no secret file yet; a file of the wrong size is refused, never used. */
function readSecret(file: string): Buffer | undefined {
  let secret: Buffer;
  try {
    secret = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (secret.length !== secretBytes) {
    throw new SigningSecretError(
      `${file} holds ${secret.length} bytes, not the ${secretBytes} of a signing secret. Restore it from a backup, or delete it so that a new one ` +
        'is made (result URLs already handed out then stop working), or set CUTOUT_SIGNING_SECRET.',
    );
  }
  return secret;
}

/**
 * Written whole under a temporary name, then linked into place. A link never replaces an existing
 * file, so of processes starting at once exactly one secret wins and the others read it; no process
 * can read the file between its creation and its write (an empty key would sign URLs anyone can
 * forge).
 */
function createSecret(dataDir: string, file: string): Buffer {
  fs.mkdirSync(dataDir, { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = fs.openSync(temp, 'wx', 0o600);
  try {
    fs.writeSync(fd, randomBytes(secretBytes));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(temp, { force: true });
  }
  const secret = readSecret(file);
  if (!secret) throw new SigningSecretError(`${file} disappeared right after it was created`);
  return secret;
}
