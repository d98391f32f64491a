// Response schemas. Registered with ids so the OpenAPI document shows them as named components.
import { z } from 'zod';
import { apiErrors, taskErrors } from '../domain/errors.ts';
import { outputFormats, precisions, subjects } from '../domain/removal-request.ts';
import { headerText } from '../header-utf8.ts';

// Only published: a z.object is published with `additionalProperties: false`, so a client
// generated from the description would refuse the fields that the Compatibility decision says v1
// may add to responses. The schemas themselves stay closed, so that a test checking a body
// against them (test/support/poll.ts) still finds a field nobody documented.
const openToAdditions = { additionalProperties: true } as const;

export const errorBodySchema = z
  .object({
    error: z
      .object({
        code: z.string().describe(`Stable error code: ${Object.keys(apiErrors).map((c) => `\`${c}\``).join(', ')}.`),
        message: z.string().describe('Human-readable explanation naming the field and the reason where one applies.'),
        request_id: z.string().describe('Unique per request; also sent as the `X-Request-Id` header and logged.'),
      })
      .meta(openToAdditions),
  })
  .meta({ id: 'Error', ...openToAdditions });

export const taskErrorSchema = z
  .object({
    code: z.enum(Object.keys(taskErrors) as [keyof typeof taskErrors]).describe(
      Object.entries(taskErrors)
        .map(([code, text]) => `\`${code}\`: ${text}`)
        .join('\n'),
    ),
    message: z.string(),
  })
  .meta({ id: 'BgRemovalError', description: 'Why a task failed. Present only when `status` is `failed`.', ...openToAdditions });

// Date.prototype.toISOString (task-view.ts) writes every timestamp, in UTC with milliseconds: an
// RFC 3339 date-time for the years 0 to 9999, which the times of tasks and links are in.
const timestamp = z.iso.datetime({ precision: 3 });

export const bgRemovalSchema = z
  .object({
    id: z
      .string()
      .describe(
        'Task identifier: `bgr_` and 20 lowercase letters and digits, the first 9 the creation time (epoch milliseconds in base 36), so ids sort in the order their tasks were created. Used as `{task_id}` in the path.',
      ),
    object: z.literal('bg.removal'),
    model: z.literal('bg-remover'),
    status: z.enum(['queued', 'processing', 'succeeded', 'failed', 'canceled']).describe(
      '`queued` → `processing` → `succeeded` | `failed`. This version never sets `canceled` (no cancel operation exists); the value is reserved.',
    ),
    created_at: timestamp.nullable().describe('ISO 8601 date-time.'),
    updated_at: timestamp.nullable().describe('ISO 8601 date-time; moves with every status change.'),
    input: z
      .object({
        image_url: z.string(),
        subject: z.enum(subjects),
        precision: z.enum(precisions).describe('`hd` is echoed as `high`.'),
        output_format: z.enum(outputFormats),
      })
      .meta(openToAdditions)
      .nullable(),
    output: z
      .object({
        // A URI: the service's own link is CUTOUT_PUBLIC_URL (config.ts holds it to RFC 3986) or
        // http://<HOST>:<port>, with a path and query of URL-safe characters; a bucket's is the
        // AWS SDK's presigned URL, every part of it percent-encoded.
        url: z
          .url()
          .nullable()
          .describe('Signed, expiring URL of the result, freshly signed on every GET. `null` once the result was deleted after the retention period.'),
        expires_at: timestamp.nullable().describe('When `url` stops working (ISO 8601); `null` when `url` is.'),
        width: z.number().int(),
        height: z.number().int(),
        format: z.enum(outputFormats),
      })
      .meta(openToAdditions)
      .nullable(),
    usage: z.object({ credits: z.number().int() }).meta(openToAdditions).nullable(),
    error: taskErrorSchema.nullable(),
  })
  .meta({ id: 'BgRemoval', ...openToAdditions });

export type BgRemoval = z.infer<typeof bgRemovalSchema>;

export const idempotencyHeaderSchema = z.object({
  'idempotency-key': z
    .string()
    .min(1, 'Idempotency-Key must not be empty')
    // Characters as the client wrote them: counted on Node's Latin-1 string, a UTF-8 key's accented
    // letters counted two to four each.
    .refine((key) => [...headerText(key)].length <= 128, 'Idempotency-Key must be at most 128 characters')
    // Only published: the refine above is what validates, in characters.
    .meta({ maxLength: 128 })
    .optional()
    .describe(
      'Optional, at most 128 characters (a UTF-8 key counts its characters, not its bytes), scoped to the account, kept for at least 24 hours. ' +
        'Sent once: a request with two `Idempotency-Key` headers gets 400 `invalid_request`.',
    ),
});

/** The 415 a route that reads a body answers to a Content-Encoding it does not decode (content-coding.ts). */
export const undecodableBodyResponse = {
  415: errorBodySchema.describe(
    '`invalid_request`: the body is sent in a `Content-Encoding` this API does not decode, or in more than one; `Accept-Encoding` names those it does.',
  ),
};

/** Error responses of a route, each documented with the codes it can carry. */
export function errorResponses(codes: (keyof typeof apiErrors)[]): Record<number, typeof errorBodySchema> {
  const byStatus = new Map<number, (keyof typeof apiErrors)[]>();
  for (const code of codes) {
    const { status } = apiErrors[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      errorBodySchema.describe(list.map((c) => `\`${c}\`: ${apiErrors[c].description}`).join(' ')),
    ]),
  );
}
