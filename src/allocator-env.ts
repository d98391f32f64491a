// The glibc malloc settings a process that runs the model starts with: `npm start` sets them (its
// script repeats these values; a test keeps the two equal), docs/deploy.md asks the same of `cutout
// worker`, and the benches start our side and the peer's with them. glibc reads them only when a
// process starts, so Node cannot apply them to itself.
//
// MALLOC_ARENA_MAX: fewer per-thread arenas; peaks 60–90 MB lower in earlier soaks.
// MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_: by default every allocation over 32 MB is
// mapped afresh and unmapped when freed, and a 12 MP task makes several (the decoded photo, its
// bands, the RGBA cutout: 36–48 MB each), each faulted in page by page again. From the heap, the
// next task reuses the pages; up to the trim threshold of freed memory stays with the process.
// `npm run bench` prints both side by side (its allocator table): per 12 MP photo 47,839 page faults
// and 112 ms of system time with glibc's defaults, 34,195 and 76 ms with these; at 2 MP 11,159 and
// 46 ms against 209 and 12 ms.
export const allocatorEnv = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: String(256 << 20),
  MALLOC_TRIM_THRESHOLD_: String(128 << 20),
} as const;

/** `env` with the allocator settings added where it does not set them itself. */
export function withAllocatorEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...allocatorEnv, ...env };
}
