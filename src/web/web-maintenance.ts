// Housekeeping of the web app: expired sessions, old sign-in and sign-up attempts, uploads whose
// task finished longer ago than results are kept, uploads no task came to own (see uploads.ts), and
// the temporary files of upload writes that died with their process.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/database.ts';
import { hoursToMs } from '../domain/durations.ts';
import { staleTemporaryMs, temporarySweepSchedule } from '../storage/atomic-write.ts';
import { deleteExpiredFiles, type ExpiredFiles, type SweepResult } from '../storage/delete-files.ts';
import { retentionBatch } from '../store/maintenance-repository.ts';
import { claimPendingUploads, forgetPendingUploads } from '../store/pending-uploads-repository.ts';
import type { UploadStore } from '../storage/upload-store.ts';
import { purgeSignUpAttempts } from '../store/sign-up-attempts-repository.ts';
import { purgeSignInAttempts } from '../store/web-accounts-repository.ts';
import { purgeExpiredSessions } from '../store/web-sessions-repository.ts';
import { findExpiredUploads, forgetUploads } from '../store/web-tasks-repository.ts';

const dayMs = 86_400_000;

/**
 * How long an upload may stay pending before it is taken for an orphan. A request holds an upload
 * pending only from its put to its task's commit, which takes seconds even with a slow bucket; an
 * hour leaves no live request there (one stalled past it whose record was taken is refused at its
 * commit, uploads.ts).
 */
export const pendingUploadGraceMs = 3_600_000;

export interface WebMaintenanceDeps {
  db: Db;
  uploads: UploadStore;
  config: Pick<Config, 'resultRetentionHours'>;
  /** Told of each upload that could not be deleted, or of the outage that ended a sweep (the next run tries again). */
  logger?: Pick<FastifyBaseLogger, 'warn'>;
  /** Whether to end each sweep after the batch in hand: the process is stopping. */
  stopped?: () => boolean;
}

export interface WebMaintenanceDone {
  sessions: number;
  /** Sign-in attempts purged. */
  attempts: number;
  signUps: number;
  uploads: number;
  orphanedUploads: number;
  /** Temporary files of upload writes that died, removed. */
  temporaries: number;
}

/**
 * Attempts are kept a day, longer than any throttle window (sign-in 15 minutes, sign-up an hour).
 * `sweepTemporaries`: whether to list the uploads' folder for leftover temporary files too (the
 * schedule does so hourly).
 */
export async function runWebMaintenance(deps: WebMaintenanceDeps, now = Date.now(), sweepTemporaries = true): Promise<WebMaintenanceDone> {
  const sessions = await purgeExpiredSessions(deps.db, now);
  const attempts = await purgeSignInAttempts(deps.db, now - dayMs);
  const signUps = await purgeSignUpAttempts(deps.db, now - dayMs);
  const expired = await deleteExpiredUploads(deps, now - hoursToMs(deps.config.resultRetentionHours));
  // Every delete of the next sweep would meet the same outage, and wait as long again to learn it;
  // a process stopping starts no further sweep (the next start does it).
  const orphanedUploads = expired.outage || deps.stopped?.() ? 0 : (await deleteOrphanedUploads(deps, now - pendingUploadGraceMs)).deleted;
  const temporaries = sweepTemporaries && !deps.stopped?.() ? await removeStaleTemporaries(deps, now - staleTemporaryMs) : 0;
  return { sessions, attempts, signUps, uploads: expired.deleted, orphanedUploads, temporaries };
}

/** Likewise for the temporary files of upload writes killed mid-way, which no record names. */
async function removeStaleTemporaries(deps: WebMaintenanceDeps, before: number): Promise<number> {
  try {
    return await deps.uploads.removeStaleTemporaries(before);
  } catch (err) {
    deps.logger?.warn({ err }, 'removing the temporary files of upload writes that died failed; the next run tries again');
    return 0;
  }
}

/** The file first, then the record: an upload is never forgotten while its file may remain. */
function deleteExpiredUploads(deps: WebMaintenanceDeps, finishedBefore: number): Promise<SweepResult> {
  return withOutageLogged(deps, 'expired uploads', {
    find: (after) => findExpiredUploads(deps.db, finishedBefore, after),
    batch: retentionBatch,
    idOf: (upload) => upload.taskId,
    keysOf: (upload) => [upload.uploadKey],
    remove: (key) => deps.uploads.delete(key),
    record: (taskIds) => forgetUploads(deps.db, taskIds),
    onFailure: (key, err) => deps.logger?.warn({ err, key }, 'deleting an upload failed; the next run tries again'),
    stopped: deps.stopped,
  });
}

/** Likewise for uploads still pending past the grace period: their record is what finds them. */
function deleteOrphanedUploads(deps: WebMaintenanceDeps, recordedBefore: number): Promise<SweepResult> {
  return withOutageLogged(deps, 'orphaned uploads', {
    // Claimed (and committed) before any file goes, so a request still holding the upload cannot
    // adopt it after its file is deleted: its create is refused instead.
    find: (after) => claimPendingUploads(deps.db, recordedBefore, after),
    batch: retentionBatch,
    idOf: (upload) => upload.uploadKey,
    keysOf: (upload) => [upload.uploadKey],
    remove: (key) => deps.uploads.delete(key),
    record: (keys) => forgetPendingUploads(deps.db, keys),
    onFailure: (key, err) => deps.logger?.warn({ err, key }, 'deleting an orphaned upload failed; the next run tries again'),
    stopped: deps.stopped,
  });
}

/**
 * Runs every intervalMs. The function returned stops the schedule, and the run in progress after its
 * batch in hand, resolving once that run has ended: the process closes its stores next.
 */
export function scheduleWebMaintenance(deps: WebMaintenanceDeps, logger: FastifyBaseLogger, intervalMs = 60_000): () => Promise<void> {
  let running: Promise<void> | undefined;
  let stopped = false;
  const temporariesDue = temporarySweepSchedule();
  // A run through a backlog can outlast the interval; ticks meanwhile are skipped.
  const tick = (): void => {
    if (running) return;
    const now = Date.now();
    running = runWebMaintenance({ logger, ...deps, stopped: () => stopped }, now, temporariesDue(now))
      .then(
        (done) => {
          if (done.sessions + done.attempts + done.signUps + done.uploads + done.orphanedUploads + done.temporaries > 0) logger.info(done, 'web maintenance');
        },
        (err: unknown) => logger.error({ err }, 'web maintenance failed'),
      )
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

/** Runs a sweep, and logs the outage that ended it, if one did. */
async function withOutageLogged<T>(deps: WebMaintenanceDeps, what: string, sweep: ExpiredFiles<T>): Promise<SweepResult> {
  const result = await deleteExpiredFiles(sweep);
  if (result.outage) deps.logger?.warn({ err: result.outage }, `${result.outage.what} failed; the sweep of ${what} stops here, and the next run tries the rest again`);
  return result;
}
