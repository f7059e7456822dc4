import { sql, type SqlBool } from 'kysely';
import { insertedId } from '../../../kit/db/index.js';
import type { EdgeRedemptionTable } from '../../db.js';
import type { Db } from '../../keys/store.js';
import { likeLiteral } from './common.js';

export type NewCode = Omit<EdgeRedemptionTable, 'id' | 'status' | 'redeemed_time' | 'used_owner_id' | 'deleted_at'>;

/** Inserts one code (enabled, unused); answers its id. */
export async function insertCode(db: Db, row: NewCode): Promise<number> {
  return insertedId(db, db.insertInto('edge_redemptions').values({ ...row, status: 1, redeemed_time: 0, used_owner_id: 0, deleted_at: null } as never));
}

/** The codes as listed: never the hash, with the name of the owner that redeemed each. */
function codeRows(db: Db) {
  return db
    .selectFrom('edge_redemptions')
    .leftJoin('edge_owners', 'edge_owners.id', 'edge_redemptions.used_owner_id')
    .where('edge_redemptions.deleted_at', 'is', null);
}

const CODE_COLUMNS = [
  'edge_redemptions.id',
  'edge_redemptions.name',
  'edge_redemptions.key_hint',
  'edge_redemptions.status',
  'edge_redemptions.quota',
  'edge_redemptions.created_time',
  'edge_redemptions.redeemed_time',
  'edge_redemptions.expired_time',
  'edge_owners.name as used_owner',
] as const;

export type CodeRow = Awaited<ReturnType<typeof codeById>> & object;

/** A code that is not deleted, by id. */
export async function codeById(db: Db, id: number) {
  return codeRows(db).select(CODE_COLUMNS).where('edge_redemptions.id', '=', id).executeTakeFirst();
}

/**
 * Codes whose name starts with `namePrefix` (or whose id is `id`), newest first, and how many match; no
 * filter: every code. Deleted codes are never listed.
 */
export async function findCodes(db: Db, where: { namePrefix?: string; id?: number }, limit: number, offset: number) {
  let q = codeRows(db);
  if (where.namePrefix !== undefined) {
    const pattern = `${likeLiteral(where.namePrefix)}%`;
    q = q.where((eb) => {
      // Escaped with '!': MySQL's default escape (the backslash) would read the pattern differently.
      const byName = sql<SqlBool>`${sql.ref('edge_redemptions.name')} like ${pattern} escape '!'`;
      return where.id === undefined ? byName : eb.or([eb('edge_redemptions.id', '=', where.id), byName]);
    });
  }
  const [rows, count] = await Promise.all([
    q.select(CODE_COLUMNS).orderBy('edge_redemptions.id', 'desc').limit(limit).offset(offset).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Changes an undeleted code's name, quota and expiry; false when there is none. */
export async function updateCode(db: Db, id: number, fields: { name: string; quota: number; expired_time: number }) {
  const r = await db.updateTable('edge_redemptions').set(fields).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** Enables or disables an undeleted code that was not redeemed; false otherwise. */
export async function setCodeStatus(db: Db, id: number, status: number, usedStatus: number) {
  const r = await db.updateTable('edge_redemptions').set({ status }).where('id', '=', id).where('deleted_at', 'is', null).where('status', '<>', usedStatus).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function softDeleteCode(db: Db, id: number, now: number) {
  const r = await db.updateTable('edge_redemptions').set({ deleted_at: now }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * Deletes every undeleted code that is used or disabled, or enabled and past its expiry at `now` (new-api's
 * DeleteInvalidRedemptions); answers how many.
 */
export async function softDeleteInvalidCodes(db: Db, now: number, status: { enabled: number; disabled: number; used: number }): Promise<number> {
  const r = await db
    .updateTable('edge_redemptions')
    .set({ deleted_at: now })
    .where('deleted_at', 'is', null)
    .where((eb) =>
      eb.or([eb('status', 'in', [status.used, status.disabled]), eb.and([eb('status', '=', status.enabled), eb('expired_time', '<>', 0), eb('expired_time', '<', now)])]),
    )
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * Marks the code of this hash used, when it is enabled, not deleted and not expired at `now`: one
 * conditional update, so of concurrent redemptions exactly one changes it (the others wait for its row and
 * then find it used). Answers whether this one did.
 */
export async function claimCode(db: Db, keyHash: string, now: number, status: { enabled: number; used: number }) {
  const r = await db
    .updateTable('edge_redemptions')
    .set({ status: status.used, redeemed_time: now })
    .where('key_hash', '=', keyHash)
    .where('status', '=', status.enabled)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('expired_time', '=', 0), eb('expired_time', '>', now)]))
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function codeByHash(db: Db, keyHash: string) {
  return db.selectFrom('edge_redemptions').select(['id', 'name', 'quota']).where('key_hash', '=', keyHash).executeTakeFirstOrThrow();
}

export async function setRedeemedBy(db: Db, id: number, ownerId: number) {
  await db.updateTable('edge_redemptions').set({ used_owner_id: ownerId }).where('id', '=', id).execute();
}

/** An owner's credits of these kinds, newest first, and how many there are. */
export async function creditsOfKinds(db: Db, ownerId: number, kinds: string[], limit: number, offset: number) {
  const q = db.selectFrom('edge_credits').where('owner_id', '=', ownerId).where('kind', 'in', kinds);
  const [rows, count] = await Promise.all([
    q.select(['credit_id', 'amount', 'kind', 'created_at']).orderBy('created_at', 'desc').orderBy('credit_id', 'desc').limit(limit).offset(offset).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}
