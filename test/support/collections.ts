// What kinds of garbage collection a process makes while large buffers come and go, as a task makes
// and drops them (src/vision/garbage-collection.ts): by default V8 marks incrementally for these.
import { constants, PerformanceObserver } from 'node:perf_hooks';

export interface CollectionKinds {
  major: boolean;
  incremental: boolean;
  kinds: number[];
}

export async function collectionKinds(): Promise<CollectionKinds> {
  const kinds: number[] = [];
  // A gc entry's detail.kind (Node's GC kind constants) is not in @types/node's PerformanceEntry.
  const observer = new PerformanceObserver((list) => kinds.push(...list.getEntries().map((entry) => (entry as { detail?: { kind?: number } }).detail?.kind ?? -1)));
  observer.observe({ entryTypes: ['gc'] });
  let held: Float32Array[] = [];
  for (let i = 0; i < 200; i++) {
    held.push(new Float32Array(2_000_000));
    if (held.length > 4) held = held.slice(1);
    await new Promise((resolve) => setImmediate(resolve));
  }
  // The observer hears of the last collections on a later turn.
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return { major: kinds.includes(constants.NODE_PERFORMANCE_GC_MAJOR), incremental: kinds.includes(constants.NODE_PERFORMANCE_GC_INCREMENTAL), kinds };
}
