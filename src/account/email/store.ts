import { isUniqueViolation } from '../../kit/db/index.js';
import type { BDb } from '../bindings/store.js';

/** SQL for email_codes: one live code (or reset token) per purpose and address, stored as a keyed hash. */
export const emailCodesStore = {
  async put(db: BDb, row: { purpose: string; email: string; code_hash: string; created_at: number; expires_at: number }) {
    await db.deleteFrom('email_codes').where('purpose', '=', row.purpose).where('email', '=', row.email).execute();
    try {
      await db.insertInto('email_codes').values({ ...row, attempts: 0 }).execute();
    } catch (e) {
      // A concurrent request stored its own code first; the newer of the two is as good as ours.
      if (!isUniqueViolation(e)) throw e;
    }
  },

  get(db: BDb, purpose: string, email: string) {
    return db.selectFrom('email_codes').selectAll().where('purpose', '=', purpose).where('email', '=', email).executeTakeFirst();
  },

  /** Deletes the row only if it still holds this hash; true when this call consumed it. */
  async take(db: BDb, purpose: string, email: string, hash: string) {
    const r = await db
      .deleteFrom('email_codes')
      .where('purpose', '=', purpose)
      .where('email', '=', email)
      .where('code_hash', '=', hash)
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  },

  async addAttempt(db: BDb, purpose: string, email: string) {
    await db
      .updateTable('email_codes')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('purpose', '=', purpose)
      .where('email', '=', email)
      .execute();
  },

  async remove(db: BDb, purpose: string, email: string) {
    await db.deleteFrom('email_codes').where('purpose', '=', purpose).where('email', '=', email).execute();
  },

  async purge(db: BDb, now: number) {
    await db.deleteFrom('email_codes').where('expires_at', '<', now).execute();
    await db.deleteFrom('telegram_assertions').where('expires_at', '<', now).execute();
  },
};
