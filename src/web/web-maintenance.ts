// Housekeeping of the web app: expired sessions, old sign-in attempts, and uploads whose task
// finished longer ago than results are kept.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/database.ts';
import type { UploadStore } from '../storage/upload-store.ts';
import { purgeSignInAttempts } from '../store/web-accounts-repository.ts';
import { purgeExpiredSessions } from '../store/web-sessions-repository.ts';
import { expireUploads } from '../store/web-tasks-repository.ts';

const dayMs = 86_400_000;

export async function runWebMaintenance(
  deps: { db: Db; uploads: UploadStore; config: Pick<Config, 'resultRetentionHours'> },
  now = Date.now(),
): Promise<{ sessions: number; attempts: number; uploads: number }> {
  const sessions = await purgeExpiredSessions(deps.db, now);
  const attempts = await purgeSignInAttempts(deps.db, now - dayMs);
  const keys = await expireUploads(deps.db, now - deps.config.resultRetentionHours * 3_600_000);
  for (const key of keys) await deps.uploads.delete(key);
  return { sessions, attempts, uploads: keys.length };
}

export function scheduleWebMaintenance(deps: Parameters<typeof runWebMaintenance>[0], logger: FastifyBaseLogger, intervalMs = 60_000): () => void {
  const tick = (): void => {
    runWebMaintenance(deps).then(
      (done) => {
        if (done.sessions + done.attempts + done.uploads > 0) logger.info(done, 'web maintenance');
      },
      (err: unknown) => logger.error({ err }, 'web maintenance failed'),
    );
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
