/**
 * A bounded in-process cache for values that are costly to compute. A value younger than `freshMs` is
 * served as it is; one younger than `staleMs` is served too, while a single refresh runs in the
 * background; an older or missing value is computed while the caller waits. Callers asking for the same
 * key while it is being computed share that one computation. `clear()` forgets every value and every
 * computation still running (their results are not kept), so a caller after it always waits for a value
 * computed after it.
 */
export class RefreshingCache<K, V> {
  private readonly entries = new Map<K, { value: V; at: number }>();
  private readonly running = new Map<K, Promise<V>>();
  private generation = 0;

  constructor(
    private readonly freshMs: number,
    private readonly staleMs: number,
    private readonly maxEntries = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K, load: () => Promise<V>): Promise<V> {
    const e = this.entries.get(key);
    const age = e ? this.now() - e.at : Infinity;
    if (e && age < this.freshMs) return Promise.resolve(e.value);
    if (e && age < this.staleMs) {
      // A failed background refresh keeps the stale value until it is too old; the caller who then
      // waits sees the error.
      this.compute(key, load).catch(() => {});
      return Promise.resolve(e.value);
    }
    return this.compute(key, load);
  }

  clear(): void {
    this.entries.clear();
    this.running.clear();
    this.generation++;
  }

  private compute(key: K, load: () => Promise<V>): Promise<V> {
    const running = this.running.get(key);
    if (running) return running;
    const generation = this.generation;
    const done = () => {
      if (this.running.get(key) === promise) this.running.delete(key);
    };
    const promise = load().then(
      (value) => {
        done();
        if (generation === this.generation) this.store(key, value);
        return value;
      },
      (e: unknown) => {
        done();
        throw e;
      },
    );
    this.running.set(key, promise);
    return promise;
  }

  private store(key: K, value: V) {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, { value, at: this.now() });
  }
}
