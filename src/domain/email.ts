// One rule for an account's email wherever one is given (web forms, the admin CLI, the store).
// Addresses are compared without letter case, so the lower-case form is the one stored and looked up.
import { z } from 'zod';

/**
 * The longest address SMTP can deliver to (RFC 5321's 256-octet path less its angle brackets).
 * Anything longer is not an address, and PostgreSQL's unique index on accounts.email refuses a key
 * past about 2.7 kB with a server error, so the bound is checked before the store is reached.
 */
export const emailMaxLength = 254;

export const emailTooLongMessage = `An email address has at most ${emailMaxLength} characters.`;

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

export const emailSchema = z.string().trim().max(emailMaxLength, emailTooLongMessage).pipe(z.email('Enter a valid email address.')).transform(normaliseEmail);
