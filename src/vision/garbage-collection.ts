// V8's garbage collector as a process that runs the pipeline sets it. A task allocates some large
// buffers afresh (the decoded photo, the model's input and mask; the working-size planes and the rows
// the band threads compose from are reused, shared-planes.ts), and V8 starts a collection
// of the whole heap each time that memory outside its heap has grown by a fixed amount. By default
// such a collection marks incrementally, in steps interleaved with the main thread's work, and the
// next one starts as the task goes on allocating: the main thread spent much of the work around
// inference collecting.
// Marked in one pause instead, a task takes fewer collections and less time in them (`npm run
// bench` prints both, README, Performance); the heap of objects is small, so a pause stays short.
import v8 from 'node:v8';
import vm from 'node:vm';

const markingFlag = '--no-incremental-marking';

let applied = false;

/**
 * Turns off incremental marking for the whole process (V8's flags are per process, so threads too),
 * unless Node was started with --incremental-marking (`npm run bench` compares the two that way) or
 * already without it (`npm start`, `npm test`). Called before the model loads, so that it holds
 * before the first task; calling it again does nothing.
 */
export function markAtomically(): void {
  if (applied) return;
  applied = true;
  if (process.execArgv.includes('--incremental-marking') || process.execArgv.includes(markingFlag)) return;
  // Changing the flag while V8's concurrent markers are at work on this heap crashed a CI run
  // (unreachable code in ConcurrentMarking::RunMajor, in a test process as its model loaded): a full
  // collection first finishes any marking under way, and nothing runs between it and the change.
  collectNow();
  v8.setFlagsFromString(markingFlag);
}

type ExposedGc = (options?: { type: 'minor' | 'major' }) => void;
let exposed: ExposedGc | undefined;

/** The `gc` that --expose-gc gives a context made after it is set; made once, as a context takes milliseconds to make. */
function exposedGc(): ExposedGc {
  if (!exposed) {
    v8.setFlagsFromString('--expose-gc');
    exposed = vm.runInNewContext('gc') as ExposedGc;
  }
  return exposed;
}

function collectNow(): void {
  exposedGc()();
}

/**
 * A collection of the young generation only, for a thread that allocates little and is done with a
 * large buffer it just made (a band thread's decoded photo, shared-decode.ts): its next full
 * collection may be many tasks away, and the buffer's memory would stay taken until then. Well
 * under a millisecond.
 */
export function collectYoung(): void {
  exposedGc()({ type: 'minor' });
}
