// A result store that just failed a thumbnail's read is left alone for a while. Thumbnails are
// made one at a time, so a bucket that hangs would otherwise hold each of a history page's 50
// requests for its whole timeout in turn (minutes of a queue every later view joins), and log 50
// warnings. Meanwhile thumbnails are missing: the list still renders, and a later view retries.

export class StoreOutage {
  private until = 0;

  constructor(private readonly pauseMs: number) {}

  /** True while reads are skipped after a failure. */
  get ongoing(): boolean {
    return Date.now() < this.until;
  }

  began(): void {
    this.until = Date.now() + this.pauseMs;
  }

  /** Forgets the failure: the next read asks the store again. */
  over(): void {
    this.until = 0;
  }
}
