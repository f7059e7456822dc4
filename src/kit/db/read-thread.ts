import { Worker } from 'node:worker_threads';
import type { CompiledQuery, Kysely, QueryExecutorProvider } from 'kysely';

type Reply = { id: number; rows?: Record<string, unknown>[]; blobs?: boolean; error?: { message: string; code?: string } };
type Waiter = { resolve(rows: Record<string, unknown>[]): void; reject(e: Error): void };

/** An error a query raised in the read thread, with SQLite's code (e.g. SQLITE_ERROR). */
export class ReadThreadError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'ReadThreadError';
  }
}

/**
 * A worker thread with its own read-only connection to a SQLite file, for SELECTs heavy enough to
 * stall the event loop (milliseconds, not microseconds: a round trip costs ~0.1–0.2 ms of CPU). It starts on
 * first use, is referenced only while a query is pending (an idle one never keeps the process alive)
 * and starts again after it died. In WAL mode it reads the last committed state and never waits
 * for the writer on the main connection.
 */
export class ReadThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiter>();

  constructor(private readonly file: string, private readonly cacheKib?: number) {}

  all<R>(sql: string, parameters: readonly unknown[]): Promise<R[]> {
    const worker = this.started();
    const id = this.nextId++;
    if (this.waiting.size === 0) worker.ref();
    return new Promise<R[]>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as Waiter['resolve'], reject });
      worker.postMessage({ id, sql, parameters });
    });
  }

  /** Stops the thread; reads still pending fail (see fail()). */
  async close() {
    await this.worker?.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./read-thread.cjs', import.meta.url), { workerData: { file: this.file, cacheKib: this.cacheKib } });
    worker.unref();
    worker.on('message', (m: Reply) => this.settle(m));
    worker.on('error', (e) => this.fail(worker, e));
    worker.on('exit', () => this.fail(worker, new Error('read thread exited')));
    return (this.worker = worker);
  }

  private settle(m: Reply) {
    const w = this.waiting.get(m.id);
    if (!w) return;
    this.waiting.delete(m.id);
    if (this.waiting.size === 0) this.worker?.unref();
    if (m.error) return w.reject(new ReadThreadError(m.error.message, m.error.code));
    const rows = m.rows!;
    if (m.blobs) for (const row of rows) for (const k in row) if (row[k] instanceof Uint8Array) row[k] = Buffer.from(row[k].buffer, row[k].byteOffset, row[k].byteLength);
    w.resolve(rows);
  }

  /** The thread died (or could not start): every pending read fails, the next one starts a new thread. */
  private fail(worker: Worker, e: Error) {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const pending = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of pending) w.reject(new ReadThreadError(`read thread failed: ${e.message}`));
  }
}

const threads = new WeakMap<object, ReadThread>();

/** Registers the read thread of a Kysely instance (openDatabase does, for SQLite files when asked). */
export function attachReadThread(db: object, thread: ReadThread) {
  threads.set(db, thread);
}

/**
 * Runs a SELECT off the event loop when the database has a read thread (a SQLite file opened with
 * `readThread`), otherwise as usual: PostgreSQL (its server already runs queries elsewhere), an
 * in-memory SQLite database, or a transaction (a Transaction is another instance, so its reads keep
 * seeing its own uncommitted writes). Off the thread, a read sees only committed data, like a read
 * from a second PostgreSQL connection.
 */
export async function readOffThread<R>(db: Kysely<any>, query: { compile(provider: QueryExecutorProvider): CompiledQuery<R> }): Promise<R[]> {
  const thread = threads.get(db);
  const compiled = query.compile(db);
  if (!thread) return (await db.executeQuery(compiled)).rows;
  return thread.all<R>(compiled.sql, compiled.parameters);
}
