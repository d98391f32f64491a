// The web app's view of a task, for the task page and its status polling.
import type { Task } from '../store/task-row.ts';
import { linkToResult, type ResultLinks } from '../storage/result-store.ts';

export interface WebTaskStatus {
  id: string;
  status: Task['status'];
  /** What the status line says. */
  label: string;
  /** Queued tasks of all accounts that were queued earlier. */
  ahead: number;
  /** Seconds since the task was claimed (processing) or since it was created. */
  elapsedSeconds: number;
  credits: number;
  error: { code: string; message: string } | null;
  result: { url: string; download: string; width: number; height: number; format: string } | null;
  resultDeleted: boolean;
}

export async function webTaskStatus(task: Task, ahead: number, links: ResultLinks, retentionHours: number, now = Date.now()): Promise<WebTaskStatus> {
  const since = task.status === 'processing' ? task.updated_at : task.created_at;
  const elapsedSeconds = Math.max(0, Math.round(((task.finished_at ?? now) - since) / 1000));
  let result: WebTaskStatus['result'] = null;
  if (task.status === 'succeeded' && task.result_key && task.result_deleted_at === null && task.result_width !== null && task.result_height !== null) {
    const { url } = await linkToResult(links, task.result_key, task.finished_at, retentionHours, now);
    result = { url, download: `cutout-${task.id}.${task.output_format}`, width: task.result_width, height: task.result_height, format: task.output_format };
  }
  return {
    id: task.id,
    status: task.status,
    label: statusLabel(task, ahead, elapsedSeconds),
    ahead,
    elapsedSeconds,
    credits: task.credits,
    error: task.status === 'failed' && task.error_code ? { code: task.error_code, message: task.error_message ?? '' } : null,
    result,
    resultDeleted: task.result_deleted_at !== null,
  };
}

function statusLabel(task: Task, ahead: number, elapsed: number): string {
  switch (task.status) {
    case 'queued':
      return ahead === 0 ? 'Queued: next in line' : `Queued: ${ahead} ${ahead === 1 ? 'task' : 'tasks'} ahead`;
    case 'processing':
      return `Processing: removing the background (${elapsed} s)`;
    case 'succeeded':
      return task.result_deleted_at === null ? `Done in ${elapsed} s` : 'Done; the result has been deleted after the retention period';
    case 'failed':
      return `Failed: ${task.error_message ?? 'unknown error'} Your credits were refunded.`;
    case 'canceled':
      return 'Canceled';
  }
}
