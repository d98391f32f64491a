// V8's garbage collector as a process that runs the pipeline sets it. A task allocates its large
// buffers afresh (the decoded photo, the copies each band takes to its thread, the working-size
// planes, the model's mask: over 100 MB at 2 MP), and V8 starts a collection of the whole heap
// each time that outside memory has grown by a fixed amount. By default such a collection marks
// incrementally, in steps interleaved with the main thread's work, and starts again as the task
// keeps allocating: `npm run bench` measured the main thread collecting through much of the work
// around inference (README, Performance). Marked in one pause instead, a task takes fewer and
// shorter collections; the heap of objects is small (tens of MB), so each pause stays short.
import v8 from 'node:v8';

/** The V8 flag this module sets. */
export const markingFlag = '--no-incremental-marking';

let applied = false;

/**
 * Turns off incremental marking for the whole process (V8's flags are per process, so threads too),
 * unless Node was started with --incremental-marking (`npm run bench` compares the two that way).
 * Called before the model loads, so that it holds before the first task; calling it again does nothing.
 */
export function markAtomically(): void {
  if (applied) return;
  applied = true;
  if (process.execArgv.includes('--incremental-marking')) return;
  v8.setFlagsFromString(markingFlag);
}
