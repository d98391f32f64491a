// A bound on how long the process waits for something it cannot cancel (a query on a connection
// that went quiet): the caller moves on at the deadline, and the work's late outcome is dropped.

/** `work`'s outcome, or the error `timedOut` makes once `ms` have passed, whichever comes first. */
export function withinMs<T>(work: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  // A failure after the deadline has nobody left to hear it.
  work.catch(() => {});
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
