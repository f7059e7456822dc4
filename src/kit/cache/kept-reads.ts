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

/** A KeptReads per database handle (a WeakMap, so a closed database's rows go with it), forgotten together. */
export function keptPerDatabase<D extends object, K, V>(ttlMs: number) {
  const forgetting = new Forgetting();
  const perDb = new WeakMap<D, KeptReads<K, V>>();
  return {
    get(db: D, key: K, read: () => Promise<V | undefined>) {
      let rows = perDb.get(db);
      if (!rows) perDb.set(db, (rows = new KeptReads<K, V>(ttlMs, forgetting)));
      return rows.get(key, read);
    },
    forget: () => forgetting.forget(),
  };
}
