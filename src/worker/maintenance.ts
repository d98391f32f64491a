// Housekeeping shared by every process that serves the data folder: results past retention are
// deleted, idempotency keys past their lifetime are forgotten.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../store/database.ts';
import { expireResults, purgeIdempotencyKeys } from '../store/maintenance-repository.ts';
import type { ResultStore } from '../storage/result-store.ts';

const hourMs = 3_600_000;

export class Maintenance {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly results: ResultStore,
    private readonly config: Pick<Config, 'resultRetentionHours' | 'idempotencyTtlHours'>,
    private readonly logger: Logger,
  ) {}

  async run(now = Date.now()): Promise<{ resultsDeleted: number; keysPurged: number }> {
    const keys = await expireResults(this.db, now - this.config.resultRetentionHours * hourMs, now);
    for (const key of keys) await this.results.delete(key);
    const keysPurged = await purgeIdempotencyKeys(this.db, now - this.config.idempotencyTtlHours * hourMs);
    if (keys.length > 0 || keysPurged > 0) this.logger.info({ resultsDeleted: keys.length, keysPurged }, 'maintenance');
    return { resultsDeleted: keys.length, keysPurged };
  }

  start(intervalMs = 60_000): void {
    const tick = (): void => {
      this.run().catch((err: unknown) => this.logger.error({ err }, 'maintenance failed'));
    };
    tick();
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
