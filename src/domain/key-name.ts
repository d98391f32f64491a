// One rule for an API key's name wherever one is given (the web form and the admin CLI).
import { z } from 'zod';

/**
 * A name is shown one key a line (the web page, `cutout keys list`) and in logs: a control
 * character (a newline, a terminal escape) would break that line or forge another, and PostgreSQL
 * refuses a NUL in text. Surrounding spaces are trimmed, so a blank name is an empty one.
 */
export const keyNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be blank')
  .max(100, 'must be at most 100 characters')
  .regex(/^\P{Cc}*$/u, 'must not contain control characters');
