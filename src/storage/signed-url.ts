// Result URLs carry their own authorisation: an expiry and an HMAC over key and expiry.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ResultLink, ResultLinks } from './result-store.ts';

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

  sign(key: string, now = Date.now()): { url: string; expiresAt: number } {
    const expires = Math.floor(now / 1000) + this.ttlSeconds;
    const query = new URLSearchParams({ expires: String(expires), signature: this.signature(key, expires) });
    return { url: `${this.baseUrl()}/api/v1/results/${key}?${query}`, expiresAt: expires * 1000 };
  }

  async link(key: string, now = Date.now()): Promise<ResultLink> {
    return this.sign(key, now);
  }

  verify(key: string, expires: string | undefined, signature: string | undefined, now = Date.now()): SignatureCheck {
    if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return 'invalid';
    const expected = Buffer.from(this.signature(key, Number(expires)));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'valid';
  }
}

/**
 * The secret comes from CUTOUT_SIGNING_SECRET, or is made once and kept in the data folder, so
 * URLs survive restarts and every process sharing the folder signs alike.
 */
export function loadSigningSecret(dataDir: string, configured: string | undefined): Buffer {
  if (configured) return Buffer.from(configured);
  const file = path.join(dataDir, 'signing-secret');
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, randomBytes(32), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return fs.readFileSync(file);
}
