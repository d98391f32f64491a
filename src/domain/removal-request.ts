// The create request, its canonical form (what idempotency compares) and its price.
import { z } from 'zod';

export const subjects = ['auto', 'product', 'portrait', 'hair'] as const;
export const precisions = ['standard', 'high'] as const;
export const outputFormats = ['png', 'webp'] as const;

export type Subject = (typeof subjects)[number];
export type Precision = (typeof precisions)[number];
export type OutputFormat = (typeof outputFormats)[number];

export const maxImageUrlLength = 2048;

export const imageUrlSchema = z
  .string({ error: (issue) => (issue.input === undefined ? 'image_url is required' : 'image_url must be a string') })
  // Characters as the published maxLength counts them (JSON Schema: code points), so an emoji is one,
  // not the two UTF-16 units .max() would count.
  .refine((value) => [...value].length <= maxImageUrlLength, `image_url must be at most ${maxImageUrlLength} characters`)
  // A URL parser strips control characters at the ends, drops tabs and newlines and percent-encodes
  // the rest, so the address fetched would differ from the one sent and echoed; and PostgreSQL
  // refuses a NUL in text. Refused on both engines alike.
  .refine((value) => !/\p{Cc}/u.test(value), { error: 'image_url must not contain control characters (U+0000–U+001F, U+007F–U+009F)', abort: true })
  // An unpaired surrogate cannot be stored as UTF-8: each engine would replace it differently.
  .refine((value) => !/\p{Cs}/u.test(value), { error: 'image_url must be valid Unicode (it holds an unpaired surrogate)', abort: true })
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, { error: 'image_url must be an absolute http or https URL', abort: true })
  // The parser also repairs what it can guess at: it trims spaces at the ends, reads a backslash as
  // a slash and supplies or drops slashes after the scheme (http:x is fetched as http://x/). Such a
  // URL is refused, so the one stored and echoed is the one fetched; a backslash is refused
  // anywhere, as no URL character. Spellings of the same address (host case, default port,
  // percent-encoding, IDNA) name what is fetched, so they are left as sent.
  .refine((value) => !value.startsWith(' ') && !value.endsWith(' '), { error: 'image_url must not begin or end with a space', abort: true })
  .refine((value) => !value.includes('\\'), { error: 'image_url must not contain a backslash', abort: true })
  .refine((value) => /^https?:\/\/[^/]/i.test(value), 'image_url must begin with http:// or https:// followed by the host');

export const createRemovalBodySchema = z
  .strictObject(
    {
    // `format` and `maxLength` are only published (the checks above are what validates).
    image_url: imageUrlSchema.meta({ description: 'Public HTTP(S) URL of the source image, at most 2048 characters, written in full: `http://` or `https://`, then the host.', format: 'uri', maxLength: maxImageUrlLength }),
    model: z
      .literal('bg-remover', { error: 'model must be "bg-remover" (the only model of this version)' })
      .optional()
      .describe('If sent, must be `bg-remover`.'),
    subject: z
      .enum(subjects, { error: `subject must be one of ${subjects.join(', ')}` })
      .default('auto')
      .describe('What the photo shows; tunes the pipeline.'),
    precision: z
      .enum(['standard', 'high', 'hd'], { error: 'precision must be one of standard, high, hd' })
      .default('standard')
      .describe('`standard` costs 1 credit, `high` 2. `hd` is an alias for `high` and is echoed as `high`.'),
    output_format: z
      .enum(outputFormats, { error: `output_format must be one of ${outputFormats.join(', ')}` })
      .default('png')
      .describe('`png` (RGBA) or `webp` (lossless, with alpha).'),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `Unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}: the request body allows only image_url, model, subject, precision and output_format.`
          : 'The request body must be a JSON object.',
    },
  )
  .meta({ id: 'CreateBgRemoval' });

export type CreateRemovalBody = z.output<typeof createRemovalBodySchema>;

export interface RemovalInput {
  image_url: string;
  subject: Subject;
  precision: Precision;
  output_format: OutputFormat;
}

/** Defaults applied and `hd` resolved, so that equal requests compare equal whatever their spelling. */
export function canonicalInput(body: CreateRemovalBody): RemovalInput {
  return {
    image_url: body.image_url,
    subject: body.subject,
    precision: body.precision === 'hd' ? 'high' : body.precision,
    output_format: body.output_format,
  };
}

/** Stable text of the canonical input: fixed key order, used as the idempotency fingerprint. */
export function canonicalFingerprint(input: RemovalInput): string {
  return JSON.stringify([input.image_url, input.subject, input.precision, input.output_format]);
}

export const creditCost: Record<Precision, number> = { standard: 1, high: 2 };
