import { parseArgs, type ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { CliError } from './output.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses flags with node's parser, then validates them with a schema, so bad input is named.
 * `positionals` is how many operands the command takes (default none): more are refused, never
 * ignored (`keys delete K1 K2` must not delete K1 alone and succeed).
 */
export function parseFlags<S extends z.ZodType>(argv: string[], options: Options, schema: S, positionals = 0): { values: z.output<S>; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError((err as Error).message, 2);
  }
  if (parsed.positionals.length > positionals) {
    const stray = parsed.positionals.slice(positionals);
    throw new CliError(`unexpected argument${stray.length > 1 ? 's' : ''} ${stray.map((a) => JSON.stringify(a)).join(' ')}`, 2);
  }
  const result = schema.safeParse(parsed.values);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new CliError(`--${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`, 2);
  }
  return { values: result.data, positionals: parsed.positionals };
}

/** A whole number written in decimal digits only: '', ' ', '0x10', '1e3' and '-4' are refused. */
export const wholeNumber = (min: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, 'must be a whole number in decimal digits')
    .transform(Number)
    .pipe(z.number().int().min(min).max(Number.MAX_SAFE_INTEGER));
