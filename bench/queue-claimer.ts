// One claimer process for bench/queue.ts: claims, heartbeats and completes tasks with no work in
// between until the queue is empty, then prints its timings as one JSON line.
import { openDatabase } from '../src/store/database.ts';
import { claimNextTask, completeTask, extendLease } from '../src/store/task-queue.ts';

const [dataDir = '', databaseUrl = ''] = process.argv.slice(2);
const db = await openDatabase({ dataDir, databaseUrl: databaseUrl || undefined, poolSize: 2 });
const perTaskMs: number[] = [];
const started = performance.now();
for (;;) {
  const t0 = performance.now();
  const claimed = await claimNextTask(db, { leaseMs: 60_000, maxAttempts: 3 });
  if (!claimed) break;
  if (!(await extendLease(db, claimed.task.id, claimed.leaseToken, 60_000))) throw new Error('lost a lease');
  if (!(await completeTask(db, claimed.task.id, claimed.leaseToken, { key: `${claimed.task.id}.png`, width: 1, height: 1 }))) throw new Error('lost a task');
  perTaskMs.push(performance.now() - t0);
}
process.stdout.write(`${JSON.stringify({ perTaskMs, wallMs: performance.now() - started })}\n`);
await db.destroy();
