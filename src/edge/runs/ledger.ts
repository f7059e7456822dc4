import type { Transaction } from 'kysely';
import { GroupCommit, type Batch } from '../../kit/db/group-commit.js';
import type { Database } from '../../kit/db/index.js';
import type { EdgeDB } from '../db.js';
import type { EdgeMetrics } from '../metrics.js';
import { lockWallets } from '../wallets/store.js';

/**
 * Batches committing at once on PostgreSQL and MySQL: a batch waiting on a row lock (one owner's wallet or
 * token) does not hold the others back, and a few connections of the pool stay free for everything else.
 */
const SERVER_BATCHES = 4;

/**
 * The edge's ledger writer: the reservations and settlements of concurrent calls share one transaction and
 * one commit (kit/db/group-commit.ts), instead of a commit each. A piece's promise settles only after its
 * batch committed, so what follows it (relaying a call, answering it) sees it durable; a failing piece is
 * rolled back alone and fails only its own caller.
 *
 * On SQLite and MySQL the pieces of a batch run one after the other in one transaction, in the order of their
 * owner ids, so they see each other's writes (a token's limit and a wallet's balance are checked as if alone)
 * and two batches in flight take the owners' rows in one order. On PostgreSQL the batch first locks its owners'
 * wallets in that order (one statement), then its pieces start together: their holds go as one statement, and
 * their settlements as another (two pieces of one owner in separate statements, in order: kit/db/combined.ts);
 * a token and a run are locked after their owner's wallet. A batch that waits on another's row lock continues
 * after that commit, and a deadlock's victim runs again. So a piece may run more than once: it reads and writes
 * through `trx` only, and whatever else follows (metrics, logs) is done by its caller once the promise settled.
 */
export class LedgerWriter {
  private readonly group: GroupCommit<EdgeDB>;

  constructor(database: Database<EdgeDB>, metrics: EdgeMetrics) {
    // A SQLite file has one writer: a second batch in flight would only wait for the first.
    const concurrency = database.dialect === 'sqlite' ? 1 : SERVER_BATCHES;
    // PostgreSQL: the pieces start together, so their holds and their settlements go as one statement each.
    const together = database.dialect === 'postgres' ? { lock: lockWallets } : undefined;
    this.group = new GroupCommit(database.db, { concurrency, together, onBatch: (pieces) => metrics.ledgerBatch(pieces) });
  }

  /**
   * Runs `work` in the next batch (ordered by `ownerId` in it); settles after that batch committed. Inserts
   * nothing in the batch reads back (runs, settlements, events) are queued on `batch` and written with the
   * batch's others, one statement per table.
   */
  write<T>(ownerId: number, work: (trx: Transaction<EdgeDB>, batch: Batch<EdgeDB>) => Promise<T>): Promise<T> {
    return this.group.run(work, ownerId);
  }

  /** Refuses new writes and waits for the accepted ones to commit. */
  close(): Promise<void> {
    return this.group.close();
  }
}
