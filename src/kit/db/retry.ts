import type { Kysely, Transaction } from 'kysely';

/** MySQL/MariaDB ER_LOCK_DEADLOCK, PostgreSQL deadlock_detected and serialization_failure. */
export function isDeadlock(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e?.errno === 1213 || e?.code === 'ER_LOCK_DEADLOCK' || e?.code === '40P01' || e?.code === '40001';
}

/**
 * Runs `fn` in a transaction, and again (up to `attempts` times, after a short random pause) when the
 * database chose it as the victim of a deadlock: the whole transaction was rolled back, so running it again
 * is what both InnoDB's and PostgreSQL's manuals tell a client to do. `fn` must only write through `trx`.
 */
export async function transactionWithRetry<DB, T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(fn);
    } catch (e) {
      if (attempt >= attempts || !isDeadlock(e)) throw e;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
    }
  }
}
