import { sql, type Kysely, type Transaction } from 'kysely';
import { insertAll, type RowInserter } from './insert-rows.js';
import { isDeadlock } from './retry.js';

export interface GroupCommitOptions<DB> {
  /** Most pieces of work in one transaction (default 64). */
  maxItems?: number;
  /**
   * How long the first piece of a batch waits for others, in ms (default 0: a batch takes what arrived in the
   * same turn of the event loop and what queued while the previous batch committed).
   */
  windowMs?: number;
  /** Batches in flight at once (default 1; a SQLite file has one writer, so more would only wait). */
  concurrency?: number;
  /** Told each batch's size once its pieces settled (committed, or failed alone). */
  onBatch?: (pieces: number) => void;
  /**
   * The pieces of a batch start together instead of one after the other: their statements queue on the
   * transaction's connection as they come, and calls of one combined() statement go as one. Every transaction
   * then first calls `lock` with its pieces' keys in ascending order, to take the rows its pieces will change in
   * one order for every batch (pieces that start together take them in any order, and two batches in flight
   * would otherwise deadlock).
   */
  together?: { lock: (trx: Transaction<DB>, keys: number[]) => Promise<void> };
}

/** Writes the rows pieces queued for it (Batch.add): once per batch, all of them, before the commit. */
export type Sink<DB, R> = (trx: Transaction<DB>, rows: R[]) => Promise<void>;

/**
 * Rows a piece hands to its batch instead of writing them itself: an insert nothing in the batch reads back
 * (an event, a log row) is then one statement for the whole batch, not one per piece; on PostgreSQL and MySQL
 * each statement is a round trip. They are written at the end of the batch, inside its transaction, so they
 * commit with the piece or not at all: first the rows of every insertRows sink (insertAll: on PostgreSQL one
 * statement for all their tables), then the other sinks, in the order they were first used.
 */
export class Batch<DB> {
  private readonly queued = new Map<Sink<DB, never>, unknown[]>();

  add<R>(sink: Sink<DB, R>, ...rows: R[]): void {
    const list = this.queued.get(sink as Sink<DB, never>);
    if (list) list.push(...rows);
    else this.queued.set(sink as Sink<DB, never>, rows);
  }

  /** Takes over what another (a piece that succeeded) queued. */
  merge(other: Batch<DB>): void {
    for (const [sink, rows] of other.queued) this.add(sink, ...(rows as never[]));
  }

  /** Writes every queued row; a failure is a SinkFailure. */
  async write(trx: Transaction<DB>): Promise<void> {
    const inserts: { into: RowInserter<DB>; rows: unknown[][] }[] = [];
    const others: [Sink<DB, never>, unknown[]][] = [];
    for (const [sink, rows] of this.queued) {
      if ('table' in sink) inserts.push({ into: sink as unknown as RowInserter<DB>, rows: rows as unknown[][] });
      else others.push([sink, rows]);
    }
    try {
      if (inserts.length) await insertAll(trx, inserts);
      for (const [sink, rows] of others) await sink(trx, rows as never[]);
    } catch (error) {
      throw new SinkFailure(error);
    }
  }
}

/** A batch's queued rows failed to write: which piece's rows failed is unknown, so each runs alone. */
class SinkFailure extends Error {
  constructor(readonly error: unknown) {
    super('group commit: queued rows not written');
  }
}

type Work<DB, T> = (trx: Transaction<DB>, batch: Batch<DB>) => Promise<T>;

interface Item<DB> {
  work: Work<DB, unknown>;
  /** Pieces of a batch run in the order of their keys, so two batches in flight take row locks in one order. */
  key: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit: pieces of work from concurrent callers share one transaction, so a batch pays for one
 * commit (on SQLite its WAL write, elsewhere a round trip and the server's flush) instead of one each. Each
 * caller's promise settles only after the batch's commit, with what its own work answered.
 *
 * A piece that fails never fails the others: the batch first runs without savepoints; when a piece throws,
 * the transaction is rolled back and the batch runs again with a savepoint around each piece, whose failure
 * is then rolled back to its savepoint alone (and the rows it queued are dropped). When the transaction fails
 * as a whole (a deadlock victim, queued rows that could not be written, a failed commit), every piece runs
 * again in a transaction of its own. So a piece may run more than once before its commit: it must only read and write through `trx`, and keep no effect of a run that did not
 * commit (what it answers is used only from the run that committed). A commit whose outcome is unknown (the
 * connection dropped during COMMIT) also runs the pieces again: their writes must be guarded by keys.
 */
export class GroupCommit<DB> {
  private readonly queue: Item<DB>[] = [];
  private readonly maxItems: number;
  private readonly windowMs: number;
  private readonly concurrency: number;
  private readonly onBatch?: (pieces: number) => void;
  private readonly together?: GroupCommitOptions<DB>['together'];
  private inFlight = 0;
  private waiting = false;
  private closed = false;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly db: Kysely<DB>,
    opts: GroupCommitOptions<DB> = {},
  ) {
    this.maxItems = Math.max(1, opts.maxItems ?? 64);
    this.windowMs = Math.max(0, opts.windowMs ?? 0);
    this.concurrency = Math.max(1, opts.concurrency ?? 1);
    this.onBatch = opts.onBatch;
    this.together = opts.together;
  }

  /** Runs `work` in the next batch; settles after that batch committed (or with the work's own error). */
  run<T>(work: Work<DB, T>, key = 0): Promise<T> {
    if (this.closed) return Promise.reject(new Error('group commit: closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, key, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Pieces waiting or in a batch. */
  get pending(): number {
    return this.queue.length + this.inFlight;
  }

  /** Refuses new work and waits for what was accepted to commit. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.queue.length === 0 && this.inFlight === 0) return;
    await new Promise<void>((resolve) => this.idle.add(resolve));
  }

  private schedule() {
    if (this.waiting || this.inFlight >= this.concurrency || this.queue.length === 0) return;
    if (this.queue.length >= this.maxItems) {
      void this.flush();
      return;
    }
    this.waiting = true;
    const go = () => {
      this.waiting = false;
      void this.flush();
    };
    if (this.windowMs > 0) setTimeout(go, this.windowMs);
    else setImmediate(go);
  }

  private async flush() {
    if (this.inFlight >= this.concurrency || this.queue.length === 0) return;
    const items = this.queue.splice(0, this.maxItems).sort((a, b) => a.key - b.key);
    this.inFlight++;
    try {
      const outcomes = await this.commit(items);
      outcomes.forEach((o, i) => (o.ok ? items[i]!.resolve(o.value) : items[i]!.reject(o.error)));
      this.onBatch?.(items.length);
    } finally {
      this.inFlight--;
      if (this.queue.length) this.schedule();
      else if (this.inFlight === 0) {
        for (const done of this.idle) done();
        this.idle.clear();
      }
    }
  }

  private async commit(items: Item<DB>[]): Promise<Outcome[]> {
    try {
      return await this.transaction(items, async (trx) => {
        const batch = new Batch<DB>();
        const out = this.together ? await allTogether(items, trx, batch) : await oneAfterAnother(items, trx, batch);
        await batch.write(trx);
        return out;
      });
    } catch (e) {
      if (items.length === 1) return [await this.alone(items[0]!, e)];
      if (isDeadlock(e) || e instanceof SinkFailure) return this.eachAlone(items);
    }
    let out: (Outcome | null)[];
    try {
      out = await this.transaction(items, async (trx) => {
        const each: (Outcome | null)[] = [];
        const batch = new Batch<DB>();
        for (const item of items) {
          await sql`savepoint group_item`.execute(trx);
          // What the piece queued joins the batch only when the piece succeeded.
          const own = new Batch<DB>();
          try {
            each.push({ ok: true, value: await item.work(trx, own) });
            batch.merge(own);
          } catch (error) {
            // A failure of the database itself (the connection) fails the rollback too, and so the batch.
            await sql`rollback to savepoint group_item`.execute(trx);
            // A deadlock's victim (PostgreSQL rolls back only the statement) runs again after the batch.
            each.push(isDeadlock(error) ? null : { ok: false, error });
          }
          await sql`release savepoint group_item`.execute(trx);
        }
        await batch.write(trx);
        return each;
      });
    } catch {
      return this.eachAlone(items);
    }
    for (let i = 0; i < items.length; i++) if (out[i] === null) out[i] = await this.alone(items[i]!);
    return out as Outcome[];
  }

  /** A transaction for these pieces: first their rows locked in key order, when they start together. */
  private transaction<T>(items: Item<DB>[], body: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    const together = this.together;
    if (!together) return this.db.transaction().execute(body);
    const keys = [...new Set(items.map((i) => i.key))].sort((a, b) => a - b);
    return this.db.transaction().execute(async (trx) => {
      await together.lock(trx, keys);
      return body(trx);
    });
  }

  /** Every piece in a transaction of its own, one after the other. */
  private async eachAlone(items: Item<DB>[]): Promise<Outcome[]> {
    const out: Outcome[] = [];
    for (const item of items) out.push(await this.alone(item));
    return out;
  }

  /** One piece in its own transaction; run again once when it was a deadlock's victim (`failed`: its first try's error). */
  private async alone(item: Item<DB>, failed?: unknown): Promise<Outcome> {
    if (failed instanceof SinkFailure) failed = failed.error;
    if (failed !== undefined && !isDeadlock(failed)) return { ok: false, error: failed };
    try {
      const value = await this.transaction([item], async (trx) => {
        const batch = new Batch<DB>();
        const v = await item.work(trx, batch);
        await batch.write(trx);
        return v;
      });
      return { ok: true, value };
    } catch (error) {
      return { ok: false, error: error instanceof SinkFailure ? error.error : error };
    }
  }
}

async function oneAfterAnother<DB>(items: Item<DB>[], trx: Transaction<DB>, batch: Batch<DB>): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const item of items) out.push({ ok: true, value: await item.work(trx, batch) });
  return out;
}

/**
 * Starts every piece at once and waits for all of them; when one failed, throws (a deadlock first, which the
 * caller treats differently), so the transaction is rolled back.
 */
async function allTogether<DB>(items: Item<DB>[], trx: Transaction<DB>, batch: Batch<DB>): Promise<Outcome[]> {
  const settled = await Promise.allSettled(items.map((item) => item.work(trx, batch)));
  const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
  if (failures.length) throw failures.find(isDeadlock) ?? failures[0];
  return settled.map((s) => ({ ok: true, value: (s as PromiseFulfilledResult<unknown>).value }));
}
