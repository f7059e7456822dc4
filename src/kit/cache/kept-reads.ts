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
 * Rows read on every request, kept `ttlMs`: a change made by another process is seen within that time. A change
 * made in this process calls its Forgetting's forget(): every kept row is dropped, and nothing read in the next
 * second is kept. Only found rows are kept (a row created elsewhere is seen at once).
 */
export class KeptReads<K, V> {
  private readonly rows: TtlCache<K, { value: V; generation: number }>;

  constructor(
    ttlMs: number,
    private readonly forgetting = new Forgetting(),
    maxEntries = 50_000,
  ) {
    this.rows = new TtlCache(ttlMs, maxEntries);
  }

  async get(key: K, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const f = this.forgetting;
    const kept = this.rows.get(key);
    if (kept && kept.generation === f.generation) return kept.value;
    const readFrom = f.generation;
    const value = await read();
    if (value !== undefined && readFrom === f.generation && Date.now() >= f.keepFrom) this.rows.set(key, { value, generation: readFrom });
    return value;
  }
}

/** What tells one database from another: a Kysely instance and its transactions share their dialect's adapter. */
export interface DatabaseHandle {
  getExecutor(): { adapter: object };
}

/**
 * A KeptReads per database (a WeakMap on its adapter, so a closed database's rows go with it), forgotten
 * together. Keyed by the adapter, not the handle, so reads through a transaction use the same rows as reads
 * through the database.
 */
export function keptPerDatabase<K, V>(ttlMs: number) {
  const forgetting = new Forgetting();
  const perDb = new WeakMap<object, KeptReads<K, V>>();
  return {
    get(db: DatabaseHandle, key: K, read: () => Promise<V | undefined>) {
      const adapter = db.getExecutor().adapter;
      let rows = perDb.get(adapter);
      if (!rows) perDb.set(adapter, (rows = new KeptReads<K, V>(ttlMs, forgetting)));
      return rows.get(key, read);
    },
    forget: () => forgetting.forget(),
  };
}
