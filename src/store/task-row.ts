import { z } from 'zod';
import { outputFormats, precisions, subjects } from '../domain/removal-request.ts';

const num = z.coerce.number();
const nullableNum = num.nullable();

// Rows are validated when read back: a row a newer or broken writer left behind fails loudly here
// instead of leaking a malformed task to a client.
export const taskRowSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  status: z.enum(['queued', 'processing', 'succeeded', 'failed', 'canceled']),
  image_url: z.string(),
  subject: z.enum(subjects),
  precision: z.enum(precisions),
  output_format: z.enum(outputFormats),
  credits: num,
  attempts: num,
  claims: num,
  lease_token: z.string().nullable(),
  lease_expires_at: nullableNum,
  result_key: z.string().nullable(),
  result_width: nullableNum,
  result_height: nullableNum,
  result_deleted_at: nullableNum,
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  created_at: num,
  updated_at: num,
  finished_at: nullableNum,
});

export type Task = z.infer<typeof taskRowSchema>;

export function toTask(row: unknown): Task {
  return taskRowSchema.parse(row);
}
