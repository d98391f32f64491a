// A worker keeps its lease alive with a heartbeat while it works. A heartbeat that finds the lease
// gone is logged as a lost lease: that must mean the lease expired and the task was taken over or
// given up, not that this worker had just ended (or handed back) the attempt itself.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ColumnNode, UpdateQueryNode, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { createAccount } from '../../src/store/accounts-repository.ts';
import { StoreUnavailableError, TaskError } from '../../src/domain/errors.ts';
import { claimNextTask, failAbandonedTasks } from '../../src/store/task-queue.ts';
import { createTask, findTask } from '../../src/store/tasks-repository.ts';
import { Worker, type TaskProcessor } from '../../src/worker/worker.ts';
import { openTestStore } from '../support/engines.ts';
import { LogCollector } from '../support/log-collector.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;
// The shortest heartbeat the worker has: every second.
const leaseMs = 3_000;
const leaseLost = 'lease lost; it expired, and another worker took the task over or it failed with its attempts used up';

/** The columns an UPDATE sets. */
function columnsSet(node: RootOperationNode): string[] {
  if (!UpdateQueryNode.is(node)) return [];
  return (node.updates ?? []).map(({ column }) => (ColumnNode.is(column) ? column.column.name : ''));
}

/**
 * Watches the worker's heartbeats through the real database: how many were sent, and whether each
 * found the lease. Asked to, it holds a task's completion (inside its transaction) until a heartbeat
 * sets off, so that the heartbeat runs while the task is being finished: on SQLite it waits for the
 * completion's commit.
 */
function heartbeatWatch(opts: { holdCompletion: boolean }) {
  const heartbeats = new Set<string>();
  const completions = new Set<string>();
  const answers: boolean[] = [];
  let sent = 0;
  const waiting = new Set<() => void>();
  let setOff = (): void => {};
  const heartbeatSetOff = new Promise<void>((resolve) => (setOff = resolve));
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      const columns = columnsSet(node);
      if (columns.length === 1 && columns[0] === 'lease_expires_at') {
        heartbeats.add(queryId.queryId);
        sent += 1;
        setOff();
      }
      if (columns.includes('result_key')) completions.add(queryId.queryId);
      return node;
    },
    transformResult: async ({ result, queryId }) => {
      if (heartbeats.delete(queryId.queryId)) {
        answers.push(result.numAffectedRows === 1n);
        for (const check of [...waiting]) check();
      }
      if (completions.delete(queryId.queryId) && opts.holdCompletion) await heartbeatSetOff;
      return result;
    },
  };
  /** Resolves once `count` heartbeats in all have been answered. */
  const answered = (count: number): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (answers.length < count) return;
        waiting.delete(check);
        resolve();
      };
      waiting.add(check);
      check();
    });
  return {
    plugin,
    /** How many heartbeats were sent, answered or not. */
    sent: () => sent,
    /** Resolves once `count` more heartbeats have been answered. */
    answeredMore: (count: number): Promise<void> => answered(answers.length + count),
    /** The next heartbeat's answer, once the worker has had a turn of the event loop to act on it. */
    async nextAnswer(): Promise<boolean> {
      const next = answers.length;
      await answered(next + 1);
      await new Promise((resolve) => setImmediate(resolve));
      return answers[next] as boolean;
    },
  };
}

let store: Awaited<ReturnType<typeof openTestStore>>;
beforeEach(async () => {
  store = await openTestStore('sqlite');
});
afterEach(async () => {
  await store.close();
});

async function queueTask(): Promise<string> {
  const account = await createAccount(store.db, { email: `h-${Math.random()}@example.test`, plan: 'paid', credits: 5 });
  return (await createTask(store.db, { accountId: account.id, input, idempotencyKey: undefined, maxActiveTasks: 5 })).task.id;
}

function workerWith(watch: ReturnType<typeof heartbeatWatch>, process: TaskProcessor, maxAttempts = 3): { worker: Worker; log: LogCollector } {
  const log = new LogCollector();
  const worker = new Worker({
    // The queue is the same on both engines; SQLite lets the heartbeats be watched through the query layer.
    db: store.db.withPlugin(watch.plugin),
    logger: pino({ level: 'info' }, log.stream),
    process,
    results: { delete: async () => {} },
    concurrency: 1,
    leaseMs,
    maxAttempts,
  });
  return { worker, log };
}

/** A processor that runs until the test lets it finish (with a result, or throwing the error given), and says when it has begun. */
function heldProcessor(): { process: TaskProcessor; begun: Promise<void>; finish: (error?: Error) => void } {
  let begin = (): void => {};
  let finish = (_error?: Error): void => {};
  const begun = new Promise<void>((resolve) => (begin = resolve));
  const finished = new Promise<Error | undefined>((resolve) => (finish = resolve));
  return {
    begun,
    finish: (error) => finish(error),
    process: async () => {
      begin();
      const error = await finished;
      if (error) throw error;
      return { key: `bgr_${Math.random()}.png`, width: 1, height: 1 };
    },
  };
}

test('a task that succeeds while its heartbeat is on its way is not logged as a lost lease', async () => {
  const id = await queueTask();
  const watch = heartbeatWatch({ holdCompletion: true });
  const { worker, log } = workerWith(watch, async () => ({ key: 'bgr_done.png', width: 1, height: 1 }));
  const answer = watch.nextAnswer();
  assert.equal(await worker.runOnce(), true);
  assert.equal(await answer, false, 'the heartbeat ran after the task was finished, and found no lease');
  assert.equal((await findTask(store.db, id))?.status, 'succeeded');
  assert.ok(log.entries.some((e) => e.msg === 'task succeeded'));
  assert.deepEqual(log.entries.filter((e) => e.msg === leaseLost), [], 'no lost lease is logged');
});

test('a task released at the end of the shutdown grace sends no more heartbeats, and logs no lost lease, while its work runs on', async () => {
  const released = heartbeatWatch({ holdCompletion: false });
  const other = heartbeatWatch({ holdCompletion: false });
  const first = heldProcessor();
  const second = heldProcessor();
  const a = workerWith(released, first.process);
  const b = workerWith(other, second.process);
  await queueTask();
  const runs = [a.worker.runOnce()];
  try {
    await first.begun;
    await queueTask();
    runs.push(b.worker.runOnce());
    await second.begun;
    await released.answeredMore(1);
    assert.equal(await a.worker.releaseHeld(), 1);
    const sentAtRelease = released.sent();
    // The other worker's heartbeat beats as often: three of its beats span more than one of the released task's.
    await other.answeredMore(3);
    assert.equal(released.sent() - sentAtRelease, 0, 'heartbeats sent for the released task after its release');
  } finally {
    first.finish();
    second.finish();
    await Promise.all(runs);
  }
  assert.deepEqual(a.log.entries.filter((e) => e.msg.startsWith('lease lost')), [], 'no lost lease is logged');
});

test('a task that another worker took over is logged as a lost lease', async () => {
  const id = await queueTask();
  const watch = heartbeatWatch({ holdCompletion: false });
  const held = heldProcessor();
  const { worker, log } = workerWith(watch, held.process);
  const run = worker.runOnce();
  try {
    await held.begun;
    await store.db.updateTable('tasks').set({ lease_expires_at: Date.now() - 1 }).where('id', '=', id).execute();
    assert.equal((await claimNextTask(store.db, { leaseMs: 60_000, maxAttempts: 3 }))?.task.id, id, 'another worker took the task');
    assert.equal((await log.next((e) => e.msg.startsWith('lease lost'))).msg, leaseLost);
  } finally {
    held.finish();
    await run;
  }
});

test('a task failed as abandoned while its worker still runs it is logged as a lost lease, in words true of that too', async () => {
  const id = await queueTask();
  const watch = heartbeatWatch({ holdCompletion: false });
  const held = heldProcessor();
  // One attempt allowed: once its lease expires, the reaper fails the task instead of another worker taking it.
  const { worker, log } = workerWith(watch, held.process, 1);
  const run = worker.runOnce();
  try {
    await held.begun;
    await store.db.updateTable('tasks').set({ lease_expires_at: Date.now() - 1 }).where('id', '=', id).execute();
    assert.deepEqual(await failAbandonedTasks(store.db, 1), [id], 'the reaper failed the task');
    const lost = await log.next((e) => e.msg.startsWith('lease lost'));
    assert.equal(lost.msg, leaseLost, 'no other worker owns the task: the message says the lease expired');
    assert.equal(lost.taskId, id);
  } finally {
    held.finish();
    await run;
  }
  assert.equal((await findTask(store.db, id))?.status, 'failed');
});

/**
 * A task held by a worker while `meanwhile` happens to it, then let end (failing with `error`, or
 * with a result); with the worker's log.
 */
async function taskThatEnds(meanwhile: (worker: Worker, id: string) => Promise<void>, error?: Error): Promise<{ id: string; log: LogCollector }> {
  const id = await queueTask();
  const held = heldProcessor();
  const { worker, log } = workerWith(heartbeatWatch({ holdCompletion: false }), held.process);
  const run = worker.runOnce();
  try {
    await held.begun;
    await meanwhile(worker, id);
  } finally {
    held.finish(error);
    await run;
  }
  return { id, log };
}

/** Released by its worker at the end of the shutdown grace. */
const released = async (worker: Worker): Promise<void> => assert.equal(await worker.releaseHeld(), 1);

/** Taken over by another worker once its lease has expired. */
async function takenOver(_worker: Worker, id: string): Promise<void> {
  await store.db.updateTable('tasks').set({ lease_expires_at: Date.now() - 1 }).where('id', '=', id).execute();
  assert.equal((await claimNextTask(store.db, { leaseMs: 60_000, maxAttempts: 3 }))?.task.id, id, 'another worker took the task');
}

// An attempt that ends by failing the task, or by giving it back (a storage outage), after another
// worker took the task over changes nothing; it says so, as a late success does.
const lateEndings = [
  { ending: 'fails', error: new TaskError('unsupported_image', 'The image data could not be decoded.'), msg: 'failed after losing the lease; the failure of this attempt was not recorded' },
  {
    ending: 'meets a storage outage',
    error: new StoreUnavailableError('The result store', new Error('connect ECONNREFUSED')),
    msg: 'gave the attempt up after losing the lease; the task was not queued again by this attempt',
  },
];
for (const { ending, error, msg } of lateEndings) {
  test(`a task that ${ending} after another worker took it over is logged as a lost lease, and is left to that worker`, async () => {
    const { id, log } = await taskThatEnds(takenOver, error);
    assert.deepEqual(
      log.entries.filter((e) => e.msg === msg).map((e) => [e.level, e.taskId]),
      [[40, id]],
      'one warning, naming the task',
    );
    const task = await findTask(store.db, id);
    assert.deepEqual([task?.status, task?.attempts], ['processing', 2], "the task is still the other worker's");
  });

  test(`a task released at the end of the shutdown grace that then ${ending} is not logged as a lost lease`, async () => {
    const { id, log } = await taskThatEnds(released, error);
    assert.deepEqual(log.entries.filter((e) => e.msg.startsWith('lease lost') || e.msg === msg), [], 'no lost lease is logged');
    assert.equal((await findTask(store.db, id))?.status, 'queued', 'the released task waits for another worker');
  });
}

test('a task released at the end of the shutdown grace that then succeeds says its result was discarded after the release, not that the lease was lost', async () => {
  const { id, log } = await taskThatEnds(released);
  assert.deepEqual(
    log.entries.filter((e) => e.msg.startsWith('finished after')).map((e) => [e.level, e.msg, e.taskId]),
    [[40, 'finished after its release; the result of this attempt was discarded', id]],
  );
  assert.equal((await findTask(store.db, id))?.status, 'queued', 'the released task waits for another worker');
});
