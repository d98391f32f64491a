// Passwords are hashed with Argon2id (memory-hard) at OWASP's recommended minimum cost.
import { Algorithm, hash, verify } from '@node-rs/argon2';

const options = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const passwordMinLength = 10;
export const passwordMaxLength = 256;

export function hashPassword(password: string): Promise<string> {
  return hash(password, options);
}

let decoy: Promise<string> | undefined;

/**
 * Verifies against the stored hash, or against a decoy when there is none, so an unknown email
 * takes as long to refuse as a wrong password and the timing does not reveal who has an account.
 */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  decoy ??= hashPassword('decoy password that matches nothing');
  const target = stored ?? (await decoy);
  const ok = await verify(target, password).catch(() => false);
  return ok && stored !== undefined;
}
