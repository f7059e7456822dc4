import type { Kysely, Selectable, Transaction } from 'kysely';
import { prepared } from '../../kit/db/prepared.js';
import type { AccountDB } from '../db.js';

export interface PasskeyCredentialsTable {
  user_id: number;
  /** base64url credential id. */
  credential_id: string;
  /** base64url COSE public key. */
  public_key: string;
  counter: number;
  rp_id: string;
  transports: string;
  /**
   * The WebAuthn user handle (base64url) the authenticator holds, when it is not this user's own id: a
   * passkey imported from new-api carries the user's id there. NULL: userHandleOf(user_id).
   */
  user_handle: string | null;
  created_at: number;
  last_used_at: number | null;
}

declare module '../db.js' {
  interface AccountDB {
    passkey_credentials: PasskeyCredentialsTable;
  }
}

export type PasskeyRow = Selectable<PasskeyCredentialsTable>;
type Db = Kysely<AccountDB> | Transaction<AccountDB>;

// Read on every password login (does the user have a passkey?), compiled once (see prepared()).
const byUser = prepared((db: Db, userId: number) => db.selectFrom('passkey_credentials').selectAll().where('user_id', '=', userId));

/** SQL for passkey credentials (one per user, as in the reference). */
export const passkeyStore = {
  async byUser(db: Db, userId: number): Promise<PasskeyRow | undefined> {
    return (await byUser(db, userId)).rows[0];
  },

  async registered(db: Db, userId: number): Promise<boolean> {
    return (await byUser(db, userId)).rows.length > 0;
  },

  byCredentialId(db: Db, credentialId: string) {
    return db.selectFrom('passkey_credentials').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
  },

  async insert(db: Db, row: PasskeyRow) {
    await db.insertInto('passkey_credentials').values(row).execute();
  },

  /** Moves the counter forward and stamps the use; false when another use got there first. */
  async markUsed(db: Db, userId: number, oldCounter: number, newCounter: number, now: number): Promise<boolean> {
    const r = await db
      .updateTable('passkey_credentials')
      .set({ counter: newCounter, last_used_at: now })
      .where('user_id', '=', userId)
      .where('counter', '=', oldCounter)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Passkeys per user among these users (the admin user list); users without one are absent. */
  async countsOf(db: Db, userIds: number[]): Promise<Map<number, number>> {
    if (userIds.length === 0) return new Map();
    const rows = await db
      .selectFrom('passkey_credentials')
      .select((eb) => ['user_id', eb.fn.countAll<number>().as('n')])
      .where('user_id', 'in', userIds)
      .groupBy('user_id')
      .execute();
    return new Map(rows.map((r) => [Number(r.user_id), Number(r.n)]));
  },

  async remove(db: Db, userId: number): Promise<boolean> {
    const r = await db.deleteFrom('passkey_credentials').where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  },
};
