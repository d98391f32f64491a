import { parseArgs, type ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { CliError } from './output.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses flags with node's parser, then validates them with a schema, so bad input is named. */
export function parseFlags<S extends z.ZodType>(argv: string[], options: Options, schema: S): { values: z.output<S>; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError((err as Error).message, 2);
  }
  const result = schema.safeParse(parsed.values);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new CliError(`--${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`, 2);
  }
  return { values: result.data, positionals: parsed.positionals };
}
