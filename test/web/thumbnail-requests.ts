// What the thumbnail tests share: asking for a task's thumbnail as its owner's browser would, and
// watching (or holding) the decodes the thumbnail module makes.
import assert from 'node:assert/strict';
import { thumbnailDeps, thumbnailQueue } from '../../src/web/thumbnails.ts';
import type { WebClient } from './web-client.ts';

export interface Thumbnail {
  status: number;
  type: string | null;
  cacheControl: string | null;
  location: string | null;
  bytes: Buffer;
}

/** GET /app/tasks/:id/thumbnail with the client's cookies; a redirect is returned, not followed. */
export async function fetchThumbnail(baseUrl: string, client: WebClient, taskId: string): Promise<Thumbnail> {
  const response = await fetch(`${baseUrl}/app/tasks/${taskId}/thumbnail`, { headers: { cookie: client.cookieHeader() }, redirect: 'manual' });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    cacheControl: response.headers.get('cache-control'),
    location: response.headers.get('location'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/** Holds every decode until `release()`, and counts the decodes that started. */
export function holdDecodes(): { started: number; release(): void; stop(): void } {
  const render = thumbnailDeps.render;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hold = { started: 0, release, stop: () => (thumbnailDeps.render = render) };
  thumbnailDeps.render = async (data, maxPixels) => {
    hold.started++;
    await released;
    return render(data, maxPixels);
  };
  return hold;
}

/** Resolves once `condition` holds, checking on each turn of the event loop. */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

/** Counts the real sharp decodes the module makes, and how many ever ran at once. */
export function watchDecodes(): { decodes: number; peak: number; peakWaiting: number; stop(): void } {
  const render = thumbnailDeps.render;
  let running = 0;
  const watch = {
    decodes: 0,
    peak: 0,
    /** The most requests seen waiting in the queue while a decode started. */
    peakWaiting: 0,
    stop: () => {
      thumbnailDeps.render = render;
    },
  };
  thumbnailDeps.render = async (data, maxPixels) => {
    running++;
    watch.decodes++;
    watch.peak = Math.max(watch.peak, running);
    watch.peakWaiting = Math.max(watch.peakWaiting, thumbnailQueue.pending);
    try {
      return await render(data, maxPixels);
    } finally {
      running--;
    }
  };
  return watch;
}

/**
 * Asks for a thumbnail, takes its result away with `removeResult`, and asks again: the second answer
 * must be the same thumbnail, served from memory with a single decode between them. The first answer
 * is returned for further checks.
 */
export async function assertServedFromMemory(ask: () => Promise<Thumbnail>, removeResult: () => unknown): Promise<Thumbnail> {
  const watch = watchDecodes();
  try {
    const first = await ask();
    assert.deepEqual([first.status, first.type, first.cacheControl], [200, 'image/webp', 'private, max-age=3600']);
    await removeResult();
    const again = await ask();
    assert.deepEqual([again.status, again.type, again.cacheControl], [200, 'image/webp', 'private, max-age=3600']);
    assert.ok(again.bytes.equals(first.bytes), 'the same thumbnail');
    assert.equal(watch.decodes, 1);
    return first;
  } finally {
    watch.stop();
  }
}
