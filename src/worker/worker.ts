// The claim loop: N slots, each claims a task under a lease, keeps the lease alive while it works,
// and ends the attempt it holds. A dead worker's task is taken over once its lease expires.
import type { Logger } from 'pino';
import { TaskError } from '../domain/errors.ts';
import type { Db } from '../store/database.ts';
import { claimNextTask, completeTask, extendLease, failAbandonedTasks, failTask, type TaskResult } from '../store/task-queue.ts';
import type { Task } from '../store/task-row.ts';

export type TaskProcessor = (task: Task) => Promise<TaskResult>;

export interface WorkerOptions {
  db: Db;
  logger: Logger;
  process: TaskProcessor;
  concurrency: number;
  leaseMs: number;
  maxAttempts: number;
  /** How often an idle slot looks for work that another process queued. */
  pollMs?: number;
}

export class Worker {
  private running = false;
  private readonly slots: Promise<void>[] = [];
  private wakeUp: (() => void)[] = [];
  private readonly pollMs: number;

  constructor(private readonly opts: WorkerOptions) {
    this.pollMs = opts.pollMs ?? 1000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (let i = 0; i < this.opts.concurrency; i++) this.slots.push(this.runSlot());
  }

  /** A task was just queued in this process: wake an idle slot now. */
  notify(): void {
    const waiters = this.wakeUp;
    this.wakeUp = [];
    for (const wake of waiters) wake();
  }

  /** Stops claiming and waits for the tasks in hand to finish. */
  async stop(): Promise<void> {
    this.running = false;
    this.notify();
    await Promise.all(this.slots.splice(0));
  }

  private async runSlot(): Promise<void> {
    while (this.running) {
      try {
        const worked = await this.runOnce();
        if (!worked) await this.idle();
      } catch (err) {
        this.opts.logger.error({ err }, 'worker loop error');
        await this.idle();
      }
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.pollMs);
      const wake = (): void => done();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp.push(wake);
    });
  }

  /** Reaps abandoned tasks, then claims and runs one task. Returns whether it found one. */
  async runOnce(): Promise<boolean> {
    const { db, leaseMs, maxAttempts, logger } = this.opts;
    const abandoned = await failAbandonedTasks(db, maxAttempts);
    for (const id of abandoned) logger.warn({ taskId: id }, 'task failed after its attempts were exhausted; credits refunded');
    const claimed = await claimNextTask(db, { leaseMs, maxAttempts });
    if (!claimed) return false;
    const { task, leaseToken } = claimed;
    const log = logger.child({ taskId: task.id, attempt: task.attempts });
    log.info('task claimed');
    const heartbeat = setInterval(() => {
      extendLease(db, task.id, leaseToken, leaseMs).then(
        (held) => held || log.warn('lease lost; another worker owns this task now'),
        (err: unknown) => log.error({ err }, 'heartbeat failed'),
      );
    }, Math.max(1000, Math.floor(leaseMs / 3)));
    try {
      const started = Date.now();
      const result = await this.opts.process(task);
      const done = await completeTask(db, task.id, leaseToken, result);
      if (done) log.info({ ms: Date.now() - started, width: result.width, height: result.height }, 'task succeeded');
      else log.warn('finished after losing the lease; the result of this attempt was discarded');
    } catch (err) {
      const error = err instanceof TaskError ? err : new TaskError('processing_failed', 'Background removal failed unexpectedly.');
      if (!(err instanceof TaskError)) log.error({ err }, 'unexpected processing error');
      const done = await failTask(db, task.id, leaseToken, { code: error.code, message: error.message });
      if (done) log.info({ code: error.code }, `task failed: ${error.message}`);
    } finally {
      clearInterval(heartbeat);
    }
    return true;
  }
}
