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

/** Polls the task as a client would until it is final; gives up after the deadline. */
export async function waitForFinal(server: TestServer, key: string, id: string, deadlineMs = 60_000): Promise<{ task: TaskBody; seen: string[] }> {
  const seen: string[] = [];
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    const res = await server.request(`/api/v1/bg/removals/${id}`, { key });
    const task = (await res.json()) as TaskBody;
    // The route writes its body without re-checking it, so every body polled in the tests is
    // checked here against the published schema: parsing drops unknown fields, so equality also
    // catches a field the schema does not have.
    assert.deepEqual(bgRemovalSchema.parse(task), task, 'a polled task matches the published BgRemoval schema');
    if (seen.at(-1) !== task.status) seen.push(task.status);
    if (task.status === 'succeeded' || task.status === 'failed') return { task, seen };
    await new Promise<void>((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`task ${id} did not finish within ${deadlineMs} ms (saw ${seen.join(' → ')})`);
}
