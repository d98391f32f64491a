import type { Task } from '../store/task-row.ts';
import { linkToResult, type ResultLinks } from '../storage/result-store.ts';
import type { BgRemoval } from './schemas.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * The public shape of a task. A succeeded task gets a freshly signed URL on every call, which
 * expires no later than retention deletes its file.
 */
export async function toBgRemoval(task: Task, links: ResultLinks, retentionHours: number, now = Date.now()): Promise<BgRemoval> {
  const succeeded = task.status === 'succeeded';
  let output: BgRemoval['output'] = null;
  if (succeeded && task.result_key !== null && task.result_width !== null && task.result_height !== null) {
    const signed = task.result_deleted_at === null ? await linkToResult(links, task.result_key, task.finished_at, retentionHours, now) : undefined;
    output = {
      url: signed?.url ?? null,
      expires_at: signed ? iso(signed.expiresAt) : null,
      width: task.result_width,
      height: task.result_height,
      format: task.output_format,
    };
  }
  return {
    id: task.id,
    object: 'bg.removal',
    model: 'bg-remover',
    status: task.status,
    created_at: iso(task.created_at),
    updated_at: iso(task.updated_at),
    input: { image_url: task.image_url, subject: task.subject, precision: task.precision, output_format: task.output_format },
    output,
    usage: succeeded ? { credits: task.credits } : null,
    error:
      task.status === 'failed' && task.error_code !== null
        ? { code: task.error_code as NonNullable<BgRemoval['error']>['code'], message: task.error_message ?? '' }
        : null,
  };
}
