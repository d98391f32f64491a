// A store whose deletes wait until the test lets them through, as a bucket answering slowly would:
// for tests that stop a process's housekeeping while a delete is in flight.

// A mixin's base must take any constructor arguments (TypeScript's rule for mixin classes).
type Deleting = new (...args: any[]) => { delete(key: string): Promise<void> };

/** `Store` (a disk store) with its deletes held at a gate: `firstDelete` settles when one arrives, `answer()` lets them all through. */
export function withGatedDeletes<Store extends Deleting>(Store: Store) {
  return class Gated extends Store {
    private through = false;
    private readonly waiting: (() => void)[] = [];
    private reached: (() => void) | undefined;
    readonly firstDelete = new Promise<void>((resolve) => (this.reached = resolve));
    /** The keys asked to be deleted, in order. */
    readonly deleted: string[] = [];
    override async delete(key: string): Promise<void> {
      this.deleted.push(key);
      this.reached?.();
      if (!this.through) await new Promise<void>((resolve) => this.waiting.push(resolve));
      await super.delete(key);
    }
    answer(): void {
      this.through = true;
      for (const resolve of this.waiting.splice(0)) resolve();
    }
  };
}
