import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

export interface CheckpointOptions {
  /** How often the thread checkpoints what the WAL holds (PASSIVE), in ms (default 100). */
  intervalMs?: number;
  /** WAL size past which it is started over (RESTART), in bytes (default 64 MiB); the file is kept under twice that. */
  restartBytes?: number;
}

/**
 * Checkpoints a SQLite file in WAL mode from a worker thread with its own connection (checkpoint-thread.cjs),
 * so that the connection that commits never does. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses 1000 pages of WAL: it copies them into the database file and syncs it, a pause of milliseconds
 * for whichever request committed then, on a process with one thread for every request.
 *
 * The thread starts one interval after opening (a command that opens, writes a little and closes never
 * starts it: its close checkpoints); until its first checkpoint, and whenever it is behind or failed, the
 * main connection checkpoints by itself (SQLite's automatic checkpoint), and otherwise never
 * (wal_autocheckpoint = 0). A checkpoint never makes a committed transaction less durable: the WAL keeps
 * every frame until it is copied, and a crash of either thread leaves SQLite's recovery on next open to
 * replay it.
 */
export class WalCheckpointer {
  private worker: Worker | undefined;
  private readonly start: NodeJS.Timeout;
  private closed = false;
  /** SQLite's automatic checkpoint in the main connection when the thread is not doing the work, in pages (SQLite's default 1000, or fewer). */
  private readonly inlinePages: number;

  constructor(
    private readonly handle: SQLite.Database,
    private readonly file: string,
    private readonly opts: Required<CheckpointOptions>,
    private readonly busyTimeoutMs: number,
  ) {
    this.inlinePages = Math.max(1, Math.min(1000, Math.floor(opts.restartBytes / (handle.pragma('page_size', { simple: true }) as number))));
    handle.pragma(`wal_autocheckpoint = ${this.inlinePages}`);
    // Only a WAL that grew past twice restartBytes (behind) is cut back when it starts over: cutting the
    // file is a commit's work, and can take milliseconds.
    handle.pragma(`journal_size_limit = ${2 * opts.restartBytes}`);
    this.start = setTimeout(() => this.started(), opts.intervalMs);
    this.start.unref();
  }

  /** Stops the thread after a last PASSIVE (the main connection's close checkpoints what is left and removes the WAL). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.start);
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    const exited = once(worker, 'exit');
    worker.ref();
    worker.postMessage('close');
    await exited;
  }

  private started() {
    if (this.closed) return;
    const worker = new Worker(new URL('./checkpoint-thread.cjs', import.meta.url), {
      workerData: { file: this.file, intervalMs: this.opts.intervalMs, restartBytes: this.opts.restartBytes },
    });
    worker.unref();
    worker.on('message', (m) => this.told(m));
    worker.on('error', () => this.failed(worker));
    worker.on('exit', () => this.failed(worker));
    this.worker = worker;
  }

  /**
   * What the thread asks of the main connection. restart: a RESTART, which takes the writer lock (so it runs
   * here: on the thread's own connection it would fail a main transaction that read before writing, with
   * SQLITE_BUSY and no busy wait), here between two tasks, so outside every transaction but one spanning
   * tasks (then nothing is done: the thread asks again); it never waits for a reader (the read thread's), and
   * copies only what was committed since the thread's last PASSIVE. behind: the WAL passed twice
   * restartBytes, so the commits checkpoint by themselves (SQLite's automatic checkpoint, which holds them
   * back) until the thread sees it caught up (as it does once started).
   */
  private told(m: unknown) {
    const h = this.handle;
    if (!h.open) return;
    if (m === 'behind') h.pragma(`wal_autocheckpoint = ${this.inlinePages}`);
    else if (m === 'caught-up') h.pragma('wal_autocheckpoint = 0');
    else if (m === 'restart') {
      if (!h.inTransaction) this.restart();
      this.worker?.postMessage('restarted');
    }
  }

  private restart() {
    const h = this.handle;
    h.pragma('busy_timeout = 0');
    try {
      h.pragma('wal_checkpoint(RESTART)');
    } catch {
      // Busy: another process's checkpoint.
    } finally {
      h.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
  }

  /** The thread died (not by close): checkpoints go back into the main connection's commits. */
  private failed(worker: Worker) {
    if (this.worker !== worker) return;
    this.worker = undefined;
    if (this.handle.open) this.handle.pragma(`wal_autocheckpoint = ${this.inlinePages}`);
  }
}

export const CHECKPOINT_DEFAULTS: Required<CheckpointOptions> = { intervalMs: 100, restartBytes: 64 * 1024 * 1024 };
