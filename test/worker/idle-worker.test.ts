// A worker with nothing to do looks for work every CUTOUT_WORKER_POLL_MS; a `cutout worker` process
// may wait like that for days, so nothing a poll leaves behind may outlive it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import pino from 'pino';
import type { KyselyPlugin } from 'kysely';
import type { Db } from '../../src/store/database.ts';
import { Worker } from '../../src/worker/worker.ts';
import { openTestStore } from '../support/engines.ts';

/** The heap's size after full collections, through the `gc` that --expose-gc gives a context made after it is set. */
function heapAfterCollection(): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Four slots over a queue that stays empty. */
function idleWorker(db: Db, pollMs: number): Worker {
  return new Worker({
    db,
    logger: pino({ level: 'silent' }),
    process: () => Promise.reject(new Error('the queue is empty: nothing should be processed')),
    results: { delete: async () => {} },
    concurrency: 4,
    leaseMs: 60_000,
    maxAttempts: 3,
    pollMs,
  });
}

test('an idle worker keeps its memory flat however many times it looks for work', async () => {
  // The queue is the same on both engines; SQLite lets the claims be counted through the query layer.
  const store = await openTestStore('sqlite');
  let polls = 0;
  const waiting = new Map<number, () => void>();
  const countPolls: KyselyPlugin = {
    transformQuery({ node }) {
      // Every claim is an UPDATE of tasks; an empty queue has nothing else to update.
      if (node.kind === 'UpdateQueryNode') {
        polls += 1;
        for (const [target, reached] of waiting) if (polls >= target) reached();
      }
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  const pollsReached = (target: number): Promise<void> =>
    polls >= target ? Promise.resolve() : new Promise((resolve) => waiting.set(target, () => (waiting.delete(target), resolve())));
  const worker = idleWorker(store.db.withPlugin(countPolls), 1);
  try {
    worker.start();
    await pollsReached(1_000);
    const before = heapAfterCollection();
    await pollsReached(11_000);
    // Kept wake-ups cost about 1.4 KB a poll; the heap's own ups and downs stay near 1 MB.
    const perPoll = (heapAfterCollection() - before) / 10_000;
    assert.ok(perPoll < 400, `the heap grew by ${Math.round(perPoll)} bytes a poll over 10,000 idle polls`);
  } finally {
    await worker.stop();
    await store.close();
  }
});

// stop() wakes the slots that are idle when it comes; a slot still in its claim must not then sleep
// a whole poll (an hour here) before it sees that the worker stopped.
test('a worker stopped while its slots are still looking for work stops without waiting for their next poll', { timeout: 10_000 }, async () => {
  const store = await openTestStore('sqlite');
  const worker = idleWorker(store.db, 3_600_000);
  try {
    worker.start();
    await worker.stop();
  } finally {
    await store.close();
  }
});
