// Housekeeping shared by every process that serves the data folder: results past retention are
// deleted, idempotency keys past their lifetime are forgotten, and the temporary files of result
// writes that died with their process are removed.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../store/database.ts';
import { findExpiredResults, markResultsDeleted, purgeIdempotencyKeys, retentionBatch } from '../store/maintenance-repository.ts';
import { deleteExpiredFiles } from '../storage/delete-files.ts';
import { keysOfTask, type ResultStore } from '../storage/result-store.ts';
import { hoursToMs } from '../domain/durations.ts';
import { staleTemporaryMs, temporarySweepSchedule } from '../storage/atomic-write.ts';

export class Maintenance {
  private timer: NodeJS.Timeout | undefined;
  /** The sweep in progress, which stop() waits for. */
  private sweep: Promise<void> | undefined;
  private stopped = false;
  private readonly temporariesDue = temporarySweepSchedule();

  constructor(
    private readonly db: Db,
    private readonly results: ResultStore,
    private readonly config: Pick<Config, 'resultRetentionHours' | 'idempotencyTtlHours'>,
    private readonly logger: Logger,
  ) {}

  async run(now = Date.now()): Promise<{ resultsDeleted: number; keysPurged: number; temporariesRemoved: number }> {
    const resultsDeleted = await this.deleteExpiredResults(now - hoursToMs(this.config.resultRetentionHours), now);
    const keysPurged = await purgeIdempotencyKeys(this.db, now - hoursToMs(this.config.idempotencyTtlHours));
    const temporariesRemoved = this.temporariesDue(now) ? await this.removeStaleTemporaries(now) : 0;
    if (resultsDeleted > 0 || keysPurged > 0 || temporariesRemoved > 0) this.logger.info({ resultsDeleted, keysPurged, temporariesRemoved }, 'maintenance');
    return { resultsDeleted, keysPurged, temporariesRemoved };
  }

  /** The temporary files of result writes killed mid-way, which no record names. */
  private async removeStaleTemporaries(now: number): Promise<number> {
    try {
      return await this.results.removeStaleTemporaries(now - staleTemporaryMs);
    } catch (err) {
      this.logger.warn({ err }, 'removing the temporary files of result writes that died failed; the next sweep tries again');
      return 0;
    }
  }

  /** Files first, then the row: a row is never marked deleted while a file of it may remain. */
  private async deleteExpiredResults(finishedBefore: number, now: number): Promise<number> {
    const { deleted, outage } = await deleteExpiredFiles({
      find: (after) => findExpiredResults(this.db, finishedBefore, after),
      batch: retentionBatch,
      idOf: (result) => result.taskId,
      keysOf: keysOfTask,
      remove: (key) => this.results.delete(key),
      record: (taskIds) => markResultsDeleted(this.db, taskIds, now),
      onFailure: (key, err) => this.logger.warn({ err, key }, 'deleting a result file failed; the next sweep tries again'),
      stopped: () => this.stopped,
    });
    if (outage) this.logger.warn({ err: outage }, `${outage.what} failed; the sweep of expired results stops here, and the next sweep tries the rest again`);
    return deleted;
  }

  start(intervalMs = 60_000): void {
    // A sweep through a backlog can outlast the interval; ticks meanwhile are skipped.
    const tick = (): void => {
      if (this.sweep) return;
      this.sweep = this.run()
        .then(
          () => {},
          (err: unknown) => this.logger.error({ err }, 'maintenance failed'),
        )
        .finally(() => (this.sweep = undefined));
    };
    tick();
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  /**
   * Ends the schedule, and the sweep in progress after the batch in hand (deleted and recorded),
   * resolving once it has ended: the process closes its stores next, which the sweep would otherwise
   * meet closed, failing with an error in the log of an ordinary stop.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.sweep;
  }
}
