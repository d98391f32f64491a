// The server tells its in-process worker each time a task is created; the worker's idle slots
// otherwise look for work only every pollMs. Here pollMs is an hour: a slot that moves was woken.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { KyselyPlugin } from 'kysely';
import { createAccount } from '../../src/store/accounts-repository.ts';
import { createTask } from '../../src/store/tasks-repository.ts';
import type { TaskResult } from '../../src/store/task-queue.ts';
import { Worker } from '../../src/worker/worker.ts';
import { openTestStore } from '../support/engines.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;
const concurrency = 4;

/** Counts the claims made through the real database, and tells a waiter when enough were answered. */
function claimCounter(): { plugin: KyselyPlugin; made: () => number; answered: (target: number) => Promise<void> } {
  const claims = new Set<string>();
  let made = 0;
  let answered = 0;
  const waiting = new Map<number, () => void>();
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      // On SQLite a claim is the one UPDATE of tasks that returns its row.
      if (node.kind === 'UpdateQueryNode' && node.returning) {
        made += 1;
        claims.add(queryId.queryId);
      }
      return node;
    },
    transformResult: async ({ result, queryId }) => {
      if (claims.delete(queryId.queryId)) {
        answered += 1;
        for (const [target, reached] of waiting) if (answered >= target) reached();
      }
      return result;
    },
  };
  return {
    plugin,
    made: () => made,
    answered: (target) => (answered >= target ? Promise.resolve() : new Promise((resolve) => waiting.set(target, () => (waiting.delete(target), resolve())))),
  };
}

let store: Awaited<ReturnType<typeof openTestStore>>;
let claims: ReturnType<typeof claimCounter>;
let worker: Worker;
/** Tasks whose processing began; they all finish when the test lets them. */
let started: number;
let startedChanged: () => void;
let finishAll: () => void;

beforeEach(async () => {
  store = await openTestStore('sqlite');
  claims = claimCounter();
  started = 0;
  startedChanged = () => {};
  const allFinished = new Promise<void>((resolve) => (finishAll = resolve));
  worker = new Worker({
    db: store.db.withPlugin(claims.plugin),
    logger: pino({ level: 'silent' }),
    process: async (): Promise<TaskResult> => {
      started += 1;
      startedChanged();
      await allFinished;
      return { key: `bgr_${started}.png`, width: 1, height: 1 };
    },
    results: { delete: async () => {} },
    concurrency,
    leaseMs: 60_000,
    maxAttempts: 3,
    pollMs: 3_600_000,
  });
});
afterEach(async () => {
  finishAll();
  await worker.stop();
  await store.close();
});

/** Starts the worker and waits until every slot has found the queue empty and gone idle. */
async function startIdle(): Promise<void> {
  worker.start();
  // What a slot does after its claim is answered runs without waiting on anything else, so one
  // turn of the event loop after the last answer sees every slot idle.
  await claims.answered(concurrency);
  await new Promise<void>((resolve) => setImmediate(resolve));
}

async function queueTasks(count: number): Promise<void> {
  const account = await createAccount(store.db, { email: `w-${Math.random()}@example.test`, plan: 'paid', credits: 10 });
  for (let i = 0; i < count; i++) {
    await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 10 });
  }
}

function whenStarted(count: number): Promise<void> {
  return new Promise((resolve) => {
    startedChanged = () => started >= count && resolve();
    startedChanged();
  });
}

test('one task created in this process wakes one idle slot, which passes the look on to one more: two claims, not one per slot', async () => {
  await startIdle();
  const before = claims.made();
  await queueTasks(1);
  worker.notify();
  await whenStarted(1);
  // stop() lets no slot claim again, and waits for every slot: the count is then final.
  const stopped = worker.stop();
  finishAll();
  await stopped;
  assert.equal(claims.made() - before, 2, 'claims made for one created task');
});

test('a burst of tasks created together wakes as many idle slots, and they all run at once', async () => {
  await startIdle();
  const before = claims.made();
  await queueTasks(3);
  for (let i = 0; i < 3; i++) worker.notify();
  await whenStarted(3);
  assert.equal(worker.busy, 3);
  const stopped = worker.stop();
  finishAll();
  await stopped;
  // The first slot to find a task also wakes the fourth, which finds the queue empty.
  assert.equal(claims.made() - before, 4, 'claims made for three created tasks');
});

test('tasks another process queued are taken at once beside the one created here, not at the next poll', { timeout: 10_000 }, async () => {
  await startIdle();
  // Queued as another process would: nobody here is told.
  await queueTasks(2);
  await queueTasks(1);
  worker.notify();
  await whenStarted(3);
  assert.equal(worker.busy, 3);
});

// Were a slot left waiting, stop() would take the hour the slots wait between polls.
test('stopping wakes every idle slot at once, without waiting for their next poll', { timeout: 10_000 }, async () => {
  await startIdle();
  const before = claims.made();
  await worker.stop();
  assert.equal(claims.made() - before, 0, 'a stopping worker claims nothing');
});
