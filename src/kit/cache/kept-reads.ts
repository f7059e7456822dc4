import { ChangeWatch } from './change-watch.js';
import { TtlCache } from './ttl-cache.js';

/** How long after a forget() nothing read is kept: a read racing the change's transaction, not yet committed, could see the old row. */
const FORGET_WINDOW_MS = 1000;

/** What several KeptReads forget together (one per database of the same rows, say). */
export class Forgetting {
  generation = 0;
  keepFrom = 0;

  forget(): void {
    this.generation++;
    this.keepFrom = Date.now() + FORGET_WINDOW_MS;
  }
}

/**
 * Rows read on every request, kept `ttlMs`: a change made by another process is seen within that time, or
 * within the watch's bound when a ChangeWatch of a counter every writer bumps is given (then `ttlMs` may be
 * long). A change made in this process calls forget() on one of its Forgettings: every kept row is dropped,
 * and nothing read in the next second is kept. Only found rows are kept (a row created elsewhere is seen at
 * once, with no counter to bump).
 */
export class KeptReads<K, V> {
  private readonly rows: TtlCache<K, { value: V; stamp: number }>;
  /** Reads in flight: callers that miss the same key at once share one read (the pieces of a batch, say). */
  private readonly reading = new Map<K, { stamp: number; value: Promise<V | undefined> }>();

  constructor(
    ttlMs: number,
    private readonly forgettings: Forgetting[] = [new Forgetting()],
    maxEntries = 50_000,
    private readonly watch?: ChangeWatch,
  ) {
    this.rows = new TtlCache(ttlMs, maxEntries);
  }

  /** Grows with every forget and every move of the watched counter. */
  private stamp(): number {
    let s = this.watch?.epoch ?? 0;
    for (const f of this.forgettings) s += f.generation;
    return s;
  }

  private keeping(): boolean {
    const now = Date.now();
    return this.forgettings.every((f) => now >= f.keepFrom);
  }

  async get(key: K, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const checking = this.watch?.check();
    if (checking) await checking;
    const stamp = this.stamp();
    const kept = this.rows.get(key);
    if (kept && kept.stamp === stamp) return kept.value;
    const shared = this.reading.get(key);
    // A shared read that failed (its caller's transaction, say) does not fail this caller: it reads itself.
    if (shared && shared.stamp === stamp) return shared.value.catch(read);
    const reading = read();
    this.reading.set(key, { stamp, value: reading });
    try {
      const value = await reading;
      if (value !== undefined && stamp === this.stamp() && this.keeping()) this.rows.set(key, { value, stamp });
      return value;
    } finally {
      if (this.reading.get(key)?.value === reading) this.reading.delete(key);
    }
  }
}

/** What tells one database from another: a Kysely instance and its transactions share their dialect's adapter. */
export interface DatabaseHandle {
  getExecutor(): { adapter: object };
  /** Kysely's: true for a transaction's handle. */
  readonly isTransaction?: boolean;
}

export interface KeptOptions<H> {
  maxEntries?: number;
  /**
   * Reads a counter every writer of the rows bumps in its change's transaction (see ChangeWatch), through a
   * handle that is not a transaction's. With it rows are kept `ttlMs` unless the counter moves; a read
   * through a transaction is then neither kept nor served from kept rows.
   */
  changes?: (db: H) => Promise<number>;
  /** The ChangeWatch's bounds (ms): the counter read at most every freshMs, trusted for trustMs. */
  freshMs?: number;
  trustMs?: number;
}

/**
 * A KeptReads per database (a WeakMap on its adapter, so a closed database's rows go with it). Keyed by the
 * adapter, not the handle, so reads through a transaction use the same rows as reads through the database.
 * forget(db) drops that database's rows (a change made through it); forget() every database's.
 */
export function keptPerDatabase<K, V, H extends DatabaseHandle = DatabaseHandle>(ttlMs: number, opts: KeptOptions<H> = {}) {
  const everywhere = new Forgetting();
  // `root`: the database's own handle (not a transaction's), which the counter is read through.
  const perDb = new WeakMap<object, { rows: KeptReads<K, V>; here: Forgetting; root?: H }>();
  const of = (db: H) => {
    const adapter = db.getExecutor().adapter;
    let d = perDb.get(adapter);
    if (!d) {
      const here = new Forgetting();
      const changes = opts.changes;
      const watch = changes && new ChangeWatch(() => changes(d!.root!), opts.freshMs, opts.trustMs);
      perDb.set(adapter, (d = { here, rows: new KeptReads<K, V>(ttlMs, [everywhere, here], opts.maxEntries, watch) }));
    }
    return d;
  };
  return {
    get(db: H, key: K, read: () => Promise<V | undefined>) {
      if (opts.changes && db.isTransaction) return read();
      const d = of(db);
      d.root = db;
      return d.rows.get(key, read);
    },
    forget(db?: H) {
      if (db) of(db).here.forget();
      else everywhere.forget();
    },
  };
}
