// The schemas word their own messages (naming the field and the reason); this joins them.
import type { ZodFastifySchemaValidationError } from 'fastify-type-provider-zod';

export function describeValidationFailure(errors: ZodFastifySchemaValidationError[]): string {
  return [...new Set(errors.map((e) => e.message))].join('; ');
}
