import assert from 'node:assert/strict';
import { bgRemovalSchema } from '../../src/api/schemas.ts';
import type { TestServer } from './server.ts';

export interface TaskBody {
  id: string;
  status: string;
  created_at: string;
  updated_at: string;
  input: Record<string, string>;
  output: { url: string | null; expires_at: string | null; width: number; height: number; format: string } | null;
  usage: { credits: number } | null;
  error: { code: string; message: string } | null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * How long to wait before the next poll: 25 ms while the key has more than half of its window's
 * requests left, then what is left of the window spread over what is left of them, keeping a few
 * for the test's other requests, as a client that keeps to its rate limit would. A task that takes
 * a few seconds (the model's first run on a slow machine) otherwise used up the default 120 a minute.
 */
function pollDelay(headers: Headers, reserve = 10): number {
  const limit = Number(headers.get('x-ratelimit-limit'));
  const remaining = Number(headers.get('x-ratelimit-remaining'));
  const resetMs = Number(headers.get('x-ratelimit-reset')) * 1000;
  if (!(remaining <= limit / 2)) return 25;
  return Math.max(25, (resetMs - Date.now()) / Math.max(1, remaining - reserve));
}

/**
 * How long to wait after a 429: its Retry-After in seconds; without one (or one that is not a
 * number of seconds), until the rate-limit window resets; without that either, a second. A missing
 * header read as 0 s would poll again at once, as fast as the server answers, until the deadline.
 */
export function retryDelay(headers: Headers, now = Date.now()): number {
  const retryAfter = headers.get('retry-after')?.trim() ?? '';
  if (/^\d+$/.test(retryAfter)) return Math.max(25, Number(retryAfter) * 1000);
  const resetMs = Number(headers.get('x-ratelimit-reset')) * 1000;
  return resetMs > now ? Math.max(25, resetMs - now) : 1000;
}

/** Polls the task as a client would until it is final; gives up after the deadline. */
export async function waitForFinal(
  server: Pick<TestServer, 'request'>,
  key: string,
  id: string,
  deadlineMs = 60_000,
): Promise<{ task: TaskBody; seen: string[] }> {
  const seen: string[] = [];
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    const res = await server.request(`/api/v1/bg/removals/${id}`, { key });
    if (res.status === 429) {
      await sleep(Math.min(retryDelay(res.headers), Math.max(0, until - Date.now())));
      continue;
    }
    const task = (await res.json()) as TaskBody;
    // The route writes its body without re-checking it, so every body polled in the tests is
    // checked here against the published schema: parsing drops unknown fields, so equality also
    // catches a field the schema does not have.
    assert.deepEqual(bgRemovalSchema.parse(task), task, 'a polled task matches the published BgRemoval schema');
    if (seen.at(-1) !== task.status) seen.push(task.status);
    if (task.status === 'succeeded' || task.status === 'failed') return { task, seen };
    await sleep(pollDelay(res.headers));
  }
  throw new Error(`task ${id} did not finish within ${deadlineMs} ms (saw ${seen.join(' → ')})`);
}
