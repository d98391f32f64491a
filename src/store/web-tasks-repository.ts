// What the web app reads and writes about tasks beyond the API's columns: the source of a task
// made in the browser, the account's history, and uploads past retention.
import { z } from 'zod';
import type { Db, Tx } from './database.ts';
import { toTask, type Task } from './task-row.ts';
import { retentionBatch } from './maintenance-repository.ts';

export interface TaskSource {
  uploadKey: string | null;
  maxPixels: number | null;
}

export async function recordTaskSource(tx: Tx, taskId: string, source: TaskSource, now = Date.now()): Promise<void> {
  await tx
    .insertInto('web_task_sources')
    .values({ task_id: taskId, upload_key: source.uploadKey, max_pixels: source.maxPixels, created_at: now })
    .execute();
}

const sourceRow = z.object({ upload_key: z.string().nullable(), max_pixels: z.coerce.number().nullable() });

/** Undefined for a task made through the API. */
export async function findTaskSource(db: Db, taskId: string): Promise<TaskSource | undefined> {
  const row = await db.selectFrom('web_task_sources').select(['upload_key', 'max_pixels']).where('task_id', '=', taskId).executeTakeFirst();
  if (!row) return undefined;
  const r = sourceRow.parse(row);
  return { uploadKey: r.upload_key, maxPixels: r.max_pixels };
}

export interface HistoryEntry {
  task: Task;
  origin: 'web' | 'api';
}

export async function listRecentTasks(db: Db, accountId: string, limit: number): Promise<HistoryEntry[]> {
  const rows = await db
    .selectFrom('tasks')
    .leftJoin('web_task_sources', 'web_task_sources.task_id', 'tasks.id')
    .selectAll('tasks')
    .select('web_task_sources.task_id as web_task_id')
    .where('tasks.account_id', '=', accountId)
    .orderBy('tasks.created_at', 'desc')
    .orderBy('tasks.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const { web_task_id: webTaskId, ...task } = row;
    return { task: toTask(task), origin: webTaskId === null ? 'api' : 'web' };
  });
}

/** Whether the upload belongs to a task of this account. */
export async function uploadBelongsTo(db: Db, uploadKey: string, accountId: string): Promise<boolean> {
  const row = await db
    .selectFrom('web_task_sources')
    .innerJoin('tasks', 'tasks.id', 'web_task_sources.task_id')
    .select('tasks.id')
    .where('web_task_sources.upload_key', '=', uploadKey)
    .where('tasks.account_id', '=', accountId)
    .executeTakeFirst();
  return row !== undefined;
}

export interface ExpiredUpload {
  taskId: string;
  uploadKey: string;
}

const expiredUploadRow = z.object({ task_id: z.string(), upload_key: z.string() });

/**
 * Up to retentionBatch uploads, in task id order after `after`, of tasks finished before the
 * cutoff. They stay recorded until forgetUploads, after their files are deleted.
 */
export async function findExpiredUploads(db: Db, finishedBefore: number, after: string | undefined): Promise<ExpiredUpload[]> {
  const rows = await db
    .selectFrom('web_task_sources')
    .innerJoin('tasks', 'tasks.id', 'web_task_sources.task_id')
    .select(['web_task_sources.task_id', 'web_task_sources.upload_key'])
    .where('web_task_sources.upload_key', 'is not', null)
    .where('tasks.finished_at', '<', finishedBefore)
    .$if(after !== undefined, (q) => q.where('web_task_sources.task_id', '>', after!))
    .orderBy('web_task_sources.task_id')
    .limit(retentionBatch)
    .execute();
  return rows.map((row) => {
    const r = expiredUploadRow.parse(row);
    return { taskId: r.task_id, uploadKey: r.upload_key };
  });
}

/** Records that the uploads of these tasks (at most retentionBatch) are deleted. */
export async function forgetUploads(db: Db, taskIds: readonly string[]): Promise<void> {
  if (taskIds.length === 0) return;
  if (taskIds.length > retentionBatch) throw new RangeError(`at most ${retentionBatch} uploads at once, not ${taskIds.length}`);
  await db.updateTable('web_task_sources').set({ upload_key: null }).where('task_id', 'in', taskIds).execute();
}

/** Queued tasks (of every account) created before this one: the task's place in line. */
export async function countQueuedAhead(db: Db, task: Task): Promise<number> {
  if (task.status !== 'queued') return 0;
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'queued')
    .where('created_at', '<', task.created_at)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
