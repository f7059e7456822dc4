import type { Kysely, Selectable, Transaction } from 'kysely';
import { prepared } from '../../kit/db/prepared.js';
import { locksRows, type DialectName } from '../../kit/db/index.js';
import type { AccountDB } from '../db.js';

export interface TwoFactorTable {
  user_id: number;
  /** The TOTP secret (base32), sealed with AES-GCM under a key derived from the server secret. */
  secret_sealed: string;
  failed_attempts: number;
  locked_until: number;
  /** Last accepted TOTP time step: a code of this step or an earlier one is refused (replay guard). */
  last_step: number;
  created_at: number;
}

export interface BackupCodesTable {
  code_hash: string;
  user_id: number;
  used_at: number | null;
  created_at: number;
}

declare module '../db.js' {
  interface AccountDB {
    two_factor: TwoFactorTable;
    two_factor_backup_codes: BackupCodesTable;
  }
}

export type TwoFactorRow = Selectable<TwoFactorTable>;
type Db = Kysely<AccountDB> | Transaction<AccountDB>;

// Read on every password login (does the user have a second factor?), compiled once (see prepared()).
const byUser = prepared((db: Db, userId: number) => db.selectFrom('two_factor').selectAll().where('user_id', '=', userId));

/** SQL for the TOTP factor and its backup codes. */
export const twoFactorStore = {
  async byUser(db: Db, userId: number, lock?: DialectName): Promise<TwoFactorRow | undefined> {
    if (lock && locksRows(lock)) return db.selectFrom('two_factor').selectAll().where('user_id', '=', userId).forUpdate().executeTakeFirst();
    return (await byUser(db, userId)).rows[0];
  },

  async insert(db: Db, userId: number, secretSealed: string, lastStep: number, now: number) {
    await db
      .insertInto('two_factor')
      .values({ user_id: userId, secret_sealed: secretSealed, failed_attempts: 0, locked_until: 0, last_step: lastStep, created_at: now })
      .execute();
  },

  async update(db: Db, userId: number, patch: Partial<Pick<TwoFactorTable, 'failed_attempts' | 'locked_until' | 'last_step'>>) {
    await db.updateTable('two_factor').set(patch).where('user_id', '=', userId).execute();
  },

  /** Which of these users have the factor (the admin user list). */
  async enrolledAmong(db: Db, userIds: number[]): Promise<Set<number>> {
    if (userIds.length === 0) return new Set();
    const rows = await db.selectFrom('two_factor').select('user_id').where('user_id', 'in', userIds).execute();
    return new Set(rows.map((r) => Number(r.user_id)));
  },

  /** Deletes the factor and its backup codes; true when there was one. */
  async remove(db: Db, userId: number): Promise<boolean> {
    await db.deleteFrom('two_factor_backup_codes').where('user_id', '=', userId).execute();
    const r = await db.deleteFrom('two_factor').where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  },

  async replaceBackupCodes(db: Db, userId: number, hashes: string[], now: number) {
    await db.deleteFrom('two_factor_backup_codes').where('user_id', '=', userId).execute();
    if (hashes.length) {
      await db
        .insertInto('two_factor_backup_codes')
        .values(hashes.map((h) => ({ code_hash: h, user_id: userId, used_at: null, created_at: now })))
        .execute();
    }
  },

  /** Marks an unused backup code used; true only for the one caller that used it. */
  async useBackupCode(db: Db, userId: number, hash: string, now: number): Promise<boolean> {
    const r = await db
      .updateTable('two_factor_backup_codes')
      .set({ used_at: now })
      .where('code_hash', '=', hash)
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Unused backup codes stored as bcrypt hashes (imported from new-api). */
  async unusedImportedHashes(db: Db, userId: number): Promise<string[]> {
    const rows = await db
      .selectFrom('two_factor_backup_codes')
      .select('code_hash')
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .where('code_hash', 'like', '$2%')
      .execute();
    return rows.map((r) => r.code_hash);
  },

  async backupCodesRemaining(db: Db, userId: number): Promise<number> {
    const r = await db
      .selectFrom('two_factor_backup_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  },

  async stats(db: Db) {
    const users = await db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    const enabled = await db
      .selectFrom('two_factor')
      .innerJoin('users', 'users.id', 'two_factor.user_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('users.deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return { total: Number(users.n), enabled: Number(enabled.n) };
  },
};
