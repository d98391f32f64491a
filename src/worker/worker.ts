// The claim loop: N slots, each claims a task under a lease, keeps the lease alive while it works,
// and ends the attempt it holds. A dead worker's task is taken over once its lease expires.
import type { Logger } from 'pino';
import { StoreUnavailableError, TaskError } from '../domain/errors.ts';
import type { Metrics } from '../metrics.ts';
import type { ResultStore } from '../storage/result-store.ts';
import type { Db } from '../store/database.ts';
import { claimNextTask, completeTask, extendLease, failAbandonedTasks, failTask, releaseTask, requeueTask, type TaskResult } from '../store/task-queue.ts';
import { findTask } from '../store/tasks-repository.ts';
import type { Task } from '../store/task-row.ts';
import { retryUntil } from './retry.ts';

export type TaskProcessor = (task: Task) => Promise<TaskResult>;

export interface WorkerOptions {
  db: Db;
  logger: Logger;
  process: TaskProcessor;
  /** Where the processor stores results: the file of an attempt that lost its lease is deleted. */
  results: Pick<ResultStore, 'delete'>;
  concurrency: number;
  leaseMs: number;
  maxAttempts: number;
  metrics?: Metrics;
  /** How often an idle slot looks for work that another process queued. */
  pollMs?: number;
}

const reapEveryMs = 30_000;

/** A task that failed, or an attempt to be made again later. */
type Failure = { kind: 'failed'; error: TaskError } | { kind: 'later'; error: StoreUnavailableError };

interface InFlight {
  taskId: string;
  leaseToken: string;
  /** Stopped by a release too: the work of a released task runs on, but the lease is no longer ours to keep. */
  heartbeat?: NodeJS.Timeout;
  /** This worker is ending the attempt: its own ending takes the lease away. */
  ending?: boolean;
  released?: boolean;
}

export class Worker {
  private running = false;
  /** Set by stop(): a claim that lands after it is handed back at once instead of being run. */
  private stopping = false;
  private endGrace: (() => void) | undefined;
  private readonly slots: Promise<void>[] = [];
  /** The idle slots' wake-ups; each removes itself when it runs, whether by notify(), stop() or its timer. */
  private readonly wakeUp = new Set<() => void>();
  private readonly pollMs: number;
  private readonly inFlight = new Set<InFlight>();
  private lastReap = 0;

  constructor(private readonly opts: WorkerOptions) {
    this.pollMs = opts.pollMs ?? 1000;
  }

  get busy(): number {
    return this.inFlight.size;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (let i = 0; i < this.opts.concurrency; i++) this.slots.push(this.runSlot());
  }

  /**
   * A task was just queued in this process: wake one idle slot now. Waking them all would send every
   * idle slot after the one task, each a claim (and perhaps a reap) for nothing. A wake-up leaves the
   * set as it runs, so k tasks queued in a row wake k slots.
   */
  notify(): void {
    const [wake] = this.wakeUp;
    wake?.();
  }

  /**
   * Stops claiming and waits for the tasks in hand to finish. Tasks still running after graceMs are
   * released (queued again, the attempt not counted) so another worker takes them at once; their
   * late result is then fenced off by the lease token.
   */
  async stop(graceMs = Number.POSITIVE_INFINITY): Promise<{ released: number }> {
    this.running = false;
    this.stopping = true;
    for (const wake of [...this.wakeUp]) wake();
    const slots = Promise.all(this.slots.splice(0));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => {
      this.endGrace = () => resolve('grace');
      if (Number.isFinite(graceMs)) timer = setTimeout(() => resolve('grace'), graceMs);
    });
    const outcome = await Promise.race([slots.then(() => 'done' as const), graceOver]);
    clearTimeout(timer);
    if (outcome === 'done') return { released: 0 };
    return { released: await this.releaseHeld() };
  }

  /**
   * Releases every task in hand now (queued again, the attempt not counted) and ends stop()'s grace
   * period: for a second signal, and for the end of the grace. A slot that claims after this (it
   * was inside its claim) hands that task back too, as soon as the claim returns.
   */
  async releaseHeld(): Promise<number> {
    this.running = false;
    this.stopping = true;
    this.endGrace?.();
    let released = 0;
    for (const held of [...this.inFlight]) {
      if (held.released) continue;
      held.released = true;
      clearInterval(held.heartbeat);
      if (await this.release(held, 'shutdown grace period over; task released for another worker')) released += 1;
    }
    return released;
  }

  private async release({ taskId, leaseToken }: InFlight, message: string): Promise<boolean> {
    try {
      const released = await releaseTask(this.opts.db, taskId, leaseToken);
      this.opts.logger.warn({ taskId }, message);
      return released;
    } catch (err) {
      this.opts.logger.error({ err, taskId }, 'could not release the task; it is taken over when its lease expires');
      return false;
    }
  }

  private async reap(): Promise<void> {
    this.lastReap = Date.now();
    const abandoned = await failAbandonedTasks(this.opts.db, this.opts.maxAttempts);
    for (const id of abandoned) {
      this.opts.metrics?.failures.inc({ code: 'processing_failed' });
      this.opts.logger.warn({ taskId: id }, 'task failed after its attempts were exhausted; credits refunded');
    }
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

  /**
   * Waits pollMs, or less if notify() comes first. A poll that ends on its timer must take its
   * wake-up with it: a `cutout worker` process is never notified, and kept, they grew its heap by
   * about 1.4 KB a poll for as long as it waited for work.
   */
  private idle(): Promise<void> {
    // stop() wakes the slots idle when it comes; one that was in its claim would otherwise sleep a whole poll.
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.wakeUp.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, this.pollMs);
      this.wakeUp.add(wake);
    });
  }

  /**
   * Claims and runs one task; returns whether it found one. Abandoned tasks are reaped when there
   * is nothing to claim, and at least every reapEveryMs while busy, rather than on every claim.
   */
  async runOnce(): Promise<boolean> {
    const { db, leaseMs, maxAttempts, logger } = this.opts;
    const claimed = await claimNextTask(db, { leaseMs, maxAttempts });
    if (!claimed || Date.now() - this.lastReap > reapEveryMs) {
      // A failed reap must not strand the task just claimed; it is tried again later.
      await this.reap().catch((err: unknown) => logger.error({ err }, 'reaping abandoned tasks failed'));
    }
    if (!claimed) return false;
    const { task, leaseToken } = claimed;
    if (this.stopping) {
      // stop() came while this claim was on its way: the task was never started, so it is handed
      // back at once rather than run (or stranded under a lease if the grace is already over).
      await this.release({ taskId: task.id, leaseToken }, 'claimed while stopping; task released for another worker');
      return true;
    }
    // The queue may hold more than the task this slot was woken for (another process queues without
    // telling this one), so the next idle slot looks as well: a claim for nothing when it is empty.
    this.notify();
    const { metrics } = this.opts;
    const held: InFlight = { taskId: task.id, leaseToken };
    this.inFlight.add(held);
    const log = logger.child({ taskId: task.id, attempt: task.attempts });
    log.info('task claimed');
    held.heartbeat = setInterval(() => {
      extendLease(db, task.id, leaseToken, leaseMs).then(
        // A heartbeat already on its way when this worker ends (or releases) the attempt finds the
        // lease gone too; the ending learns for itself whether the lease was lost. Otherwise the lease
        // expired: another worker claimed the task, or the reaper failed it, and the one UPDATE
        // cannot tell which, so the message holds for both.
        (kept) => kept || held.ending || held.released || log.warn('lease lost; it expired, and another worker took the task over or it failed with its attempts used up'),
        (err: unknown) => log.error({ err }, 'heartbeat failed'),
      );
    }, Math.max(1000, Math.floor(leaseMs / 3)));
    const started = Date.now();
    // A database outage while a task ends should not waste its work: the ending is retried for as
    // long as a lease lasts (the heartbeat keeps running meanwhile).
    const persist = <T>(what: string, fn: () => Promise<T>): Promise<T> =>
      retryUntil(fn, Date.now() + leaseMs, (err) => log.warn({ err }, `${what} failed; retrying`));
    try {
      let outcome: { kind: 'succeeded'; result: TaskResult } | Failure;
      try {
        outcome = { kind: 'succeeded', result: await this.opts.process(task) };
      } catch (err) {
        outcome = this.failureOf(err, task, log);
      }
      const seconds = (Date.now() - started) / 1000;
      held.ending = true;
      if (outcome.kind === 'succeeded') {
        const { result } = outcome;
        const done = await persist('completing the task', () => completeTask(db, task.id, leaseToken, result));
        // An ending whose reply was lost may have committed before its retry found the lease gone:
        // the task then records this attempt's key, and its file is the task's result.
        const owner = done ? 'this attempt' : await this.resultOwner(task.id, result.key, log);
        if (owner === 'this attempt') {
          metrics?.taskDuration.observe({ outcome: 'succeeded' }, seconds);
          metrics?.creditsCharged.inc(task.credits);
          log.info({ ms: Date.now() - started, width: result.width, height: result.height }, 'task succeeded');
        } else if (owner === 'another attempt') {
          // A task this worker released itself was not lost: the release said so.
          log.warn(held.released ? 'finished after its release; the result of this attempt was discarded' : 'finished after losing the lease; the result of this attempt was discarded');
          // The file is this attempt's own (its key carries the claim number) and not the task's
          // result: deleting it cannot touch the attempt that took over. Left behind, retention deletes it.
          await this.opts.results.delete(result.key).catch((err: unknown) => log.warn({ err, key: result.key }, 'deleting the discarded result failed'));
        }
      } else if (outcome.kind === 'later') {
        const requeued = await persist('giving the task back', () => requeueTask(db, task.id, leaseToken));
        if (requeued) {
          log.warn({ err: outcome.error }, `${outcome.error.message}; the task is queued for another attempt`);
        } else if (!held.released) {
          // A lease this worker gave back itself (releaseHeld) was not lost: the release said so.
          log.warn({ err: outcome.error }, 'gave the attempt up after losing the lease; the task was not queued again by this attempt');
        }
      } else {
        const { error } = outcome;
        const done = await persist('failing the task', () => failTask(db, task.id, leaseToken, { code: error.code, message: error.message }));
        if (done) {
          metrics?.taskDuration.observe({ outcome: 'failed' }, seconds);
          metrics?.failures.inc({ code: error.code });
          log.info({ code: error.code }, `task failed: ${error.message}`);
        } else if (!held.released) {
          log.warn({ code: error.code }, 'failed after losing the lease; the failure of this attempt was not recorded');
        }
      }
    } finally {
      clearInterval(held.heartbeat);
      this.inFlight.delete(held);
    }
    return true;
  }

  /** A task's own failure ends it; an outage of our storage gives the attempt back while attempts remain. */
  private failureOf(err: unknown, task: Task, log: Logger): Failure {
    if (err instanceof TaskError) return { kind: 'failed', error: err };
    if (err instanceof StoreUnavailableError) {
      if (task.attempts < this.opts.maxAttempts) return { kind: 'later', error: err };
      log.error({ err }, 'storage unavailable on the last attempt');
      return { kind: 'failed', error: new TaskError('processing_failed', `${err.what} failed on each of the ${task.attempts} attempts; the credits were refunded.`) };
    }
    log.error({ err }, 'unexpected processing error');
    return { kind: 'failed', error: new TaskError('processing_failed', 'Background removal failed unexpectedly.') };
  }

  /** Which attempt's file the task records as its result; unknown (the file kept) when it cannot be read. */
  private async resultOwner(taskId: string, key: string, log: Logger): Promise<'this attempt' | 'another attempt' | 'unknown'> {
    try {
      return (await findTask(this.opts.db, taskId))?.result_key === key ? 'this attempt' : 'another attempt';
    } catch (err) {
      log.warn({ err }, 'reading back a task that lost its lease failed; its file is left to retention');
      return 'unknown';
    }
  }
}
