/**
 * A counter in a database that every writer of some rows bumps in the transaction of its change, watched by
 * this process so that it may keep those rows long: `epoch` grows each time the counter is seen to move.
 *
 * The counter is read at most every `freshMs`. check() answers at once while the last read began less than
 * `trustMs` ago (starting a read in the background once it is older than `freshMs`); past that its caller
 * waits for a read. So rows kept under an epoch are never used more than `trustMs` after a change committed
 * elsewhere (plus the read's own time), and a steady flow of callers never waits.
 */
export class ChangeWatch {
  epoch = 0;
  private seen: number | undefined;
  /** When the last successful read began: the counter was at least as new as then. */
  private checkedFrom = -Infinity;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly read: () => Promise<number>,
    private readonly freshMs = 250,
    private readonly trustMs = 750,
    // Monotonic: a wall clock set back must not make an old read look fresh.
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Undefined when the epoch may be used now; otherwise the read to wait for (it may fail). */
  check(): Promise<void> | undefined {
    const age = this.now() - this.checkedFrom;
    if (age < this.freshMs) return undefined;
    const reading = (this.reading ??= this.readCounter());
    return age < this.trustMs ? undefined : reading;
  }

  private readCounter(): Promise<void> {
    const from = this.now();
    const reading = this.read()
      .then((n) => {
        // Any move counts (a database restored from a copy goes back).
        if (this.seen !== undefined && n !== this.seen) this.epoch++;
        this.seen = n;
        this.checkedFrom = from;
      })
      .finally(() => {
        this.reading = undefined;
      });
    // A read nobody waits for fails quietly: the first caller past trustMs reads again and sees the error.
    reading.catch(() => {});
    return reading;
  }
}
