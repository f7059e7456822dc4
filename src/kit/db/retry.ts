import type { Kysely, Transaction } from 'kysely';
import { AppError } from '../http/errors.js';

/** MySQL/MariaDB ER_LOCK_DEADLOCK, PostgreSQL deadlock_detected and serialization_failure. */
export function isDeadlock(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e?.errno === 1213 || e?.code === 'ER_LOCK_DEADLOCK' || e?.code === '40P01' || e?.code === '40001';
}

/** MySQL/MariaDB ER_LOCK_WAIT_TIMEOUT (innodb_lock_wait_timeout), PostgreSQL lock_not_available (lock_timeout). */
export function isLockTimeout(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e?.errno === 1205 || e?.code === 'ER_LOCK_WAIT_TIMEOUT' || e?.code === '55P03';
}

/**
 * Runs `fn` in a transaction, and again (up to `attempts` times, after a short random pause) when the
 * database chose it as the victim of a deadlock: the whole transaction was rolled back, so running it again
 * is what both InnoDB's and PostgreSQL's manuals tell a client to do. `fn` must only write through `trx`.
 * A deadlock on the last attempt, or a lock wait that timed out (not run again: it already waited the
 * server's whole timeout), is contention rather than a fault: it fails as SERVICE_UNAVAILABLE (503,
 * Retry-After), with the database's error as its cause.
 */
export async function transactionWithRetry<DB, T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(fn);
    } catch (e) {
      if (isDeadlock(e) && attempt < attempts) {
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
        continue;
      }
      if (isDeadlock(e) || isLockTimeout(e)) throw Object.assign(new AppError('SERVICE_UNAVAILABLE', { headers: { 'Retry-After': '1' } }), { cause: e });
      throw e;
    }
  }
}
