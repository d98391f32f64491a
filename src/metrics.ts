// Prometheus metrics for one process. Each process has its own registry (no global state), so an
// API process, a worker process and the one-process default each expose what they do.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { withinMs } from './deadline.ts';
import type { Db } from './store/database.ts';

const activeStatuses = ['queued', 'processing'] as const;
/** How long a scrape waits for the queue's figures; Prometheus's own scrape timeout is 10 s by default. */
const queueReadTimeoutMs = 2000;

export class Metrics {
  readonly registry = new Registry();
  readonly taskDuration: Histogram<'outcome'>;
  readonly stageDuration: Histogram<'stage'>;
  readonly failures: Counter<'code'>;
  readonly creditsCharged: Counter;
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;

  constructor(db: Db) {
    collectDefaultMetrics({ register: this.registry, prefix: 'cutout_' });
    const registers = [this.registry];
    // Read from the shared database at scrape time, so every process reports the same queue. A
    // database that fails or hangs leaves the gauge out of that scrape rather than failing or holding
    // the whole scrape: the process's own figures matter most during an outage, and a stale queue
    // figure would read as current.
    new Gauge({
      name: 'cutout_tasks',
      help: 'Tasks queued or processing, by status (all processes; read from the database at scrape time, absent while it cannot be read).',
      labelNames: ['status'],
      registers,
      async collect() {
        const counting = db
          .selectFrom('tasks')
          .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
          .where('status', 'in', [...activeStatuses])
          .groupBy('status')
          .execute();
        let rows: Awaited<typeof counting>;
        try {
          rows = await withinMs(counting, queueReadTimeoutMs, () => new Error(`the queue was not read within ${queueReadTimeoutMs} ms`));
        } catch {
          this.reset();
          return;
        }
        for (const status of activeStatuses) this.set({ status }, Number(rows.find((r) => r.status === status)?.n ?? 0));
      },
    });
    const taskBuckets = [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128];
    this.taskDuration = new Histogram({
      name: 'cutout_task_duration_seconds',
      help: 'Time a worker spent on a task attempt, by outcome.',
      labelNames: ['outcome'],
      buckets: taskBuckets,
      registers,
    });
    this.stageDuration = new Histogram({
      name: 'cutout_task_stage_seconds',
      help: 'Time per stage of a task: fetch (download), remove (model and encoding), store (result upload).',
      labelNames: ['stage'],
      buckets: [0.01, 0.05, ...taskBuckets],
      registers,
    });
    this.failures = new Counter({ name: 'cutout_task_failures_total', help: 'Failed tasks, by task error code.', labelNames: ['code'], registers });
    this.creditsCharged = new Counter({ name: 'cutout_credits_charged_total', help: 'Credits charged for succeeded tasks.', registers });
    this.httpDuration = new Histogram({
      name: 'cutout_http_request_duration_seconds',
      help: 'HTTP request latency, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
  }

  async stage<T>(stage: 'fetch' | 'remove' | 'store', fn: () => Promise<T>): Promise<T> {
    const end = this.stageDuration.startTimer({ stage });
    try {
      return await fn();
    } finally {
      end();
    }
  }
}
