import type { Kysely } from 'kysely';
import type { EdgeDB } from '../db.js';
import { keptPerDatabase } from '../../kit/cache/kept-reads.js';
import { prepared } from '../../kit/db/prepared.js';
import { nowSeconds } from '../db.js';

export type Db = Kysely<EdgeDB>;

/** The owner's id, creating the owner on first use. */
export async function ensureOwner(db: Db, name: string): Promise<number> {
  await db.insertInto('edge_owners').values({ name, created_at: nowSeconds() } as never).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('edge_owners').select('id').where('name', '=', name).executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function ownerByName(db: Db, name: string) {
  return db.selectFrom('edge_owners').selectAll().where('name', '=', name).executeTakeFirst();
}

export async function insertKey(db: Db, row: { key_id: string; owner_id: number; secret_hash: string }) {
  await db.insertInto('edge_keys').values({ ...row, created_at: nowSeconds(), revoked_at: null }).execute();
}

// Runs on every request (see prepared()): the key, its owner and, for an account user's key, its token.
const keyRow = prepared((db: Db, keyId: string) =>
  db
    .selectFrom('edge_keys')
    .innerJoin('edge_owners', 'edge_owners.id', 'edge_keys.owner_id')
    .leftJoin('edge_tokens', 'edge_tokens.key_id', 'edge_keys.key_id')
    .select([
      'edge_keys.key_id',
      'edge_keys.owner_id',
      'edge_keys.secret_hash',
      'edge_keys.revoked_at',
      'edge_owners.name as owner',
      'edge_owners.suspended_at as owner_suspended_at',
      'edge_tokens.id as token_id',
      'edge_tokens.name as token_name',
      'edge_tokens.status as token_status',
      'edge_tokens.expired_time as token_expired_time',
      'edge_tokens.model_limits_enabled as token_model_limits_enabled',
      'edge_tokens.model_limits as token_model_limits',
      'edge_tokens.allow_ips as token_allow_ips',
      'edge_tokens.deleted_at as token_deleted_at',
    ])
    .where('edge_keys.key_id', '=', keyId),
);

type KeyRow = Awaited<ReturnType<typeof keyRow>>['rows'][number];

const keyChanges = prepared((db: Db) => db.selectFrom('edge_key_changes').select('changes').where('id', '=', 1));

/**
 * Key rows are read on every request: kept a minute per database (kit/cache/kept-reads.ts) while the change
 * counter stays (edge_key_changes, read at most every 250 ms, in the background while requests flow). Every
 * change to an existing key row (a revoked key, a changed, disabled or deleted token, a suspended or resumed
 * owner) bumps it in its transaction (changeKeys): every instance drops its kept rows within 750 ms of the
 * commit (plus one read of the counter), the one that made it at once. A new key needs no bump: a missing
 * row is never kept.
 */
const keyRows = keptPerDatabase<string, KeyRow, Db>(60_000, {
  changes: async (db) => Number((await keyChanges(db)).rows[0]?.changes ?? 0),
  maxEntries: 50_000,
});

/**
 * Changes what existing key rows carry, in `db`'s transaction (or one of its own): bumps the change counter
 * first (so key writers queue on its row before any other) and then runs `write`.
 */
export async function changeKeys<T>(db: Db, write: (trx: Db) => Promise<T>): Promise<T> {
  if (!db.isTransaction) return db.transaction().execute((trx) => changeKeys(trx, write));
  keyRows.forget(db);
  await db.updateTable('edge_key_changes').set((eb) => ({ changes: eb('changes', '+', 1) })).where('id', '=', 1).execute();
  return write(db);
}

/** A key with its owner and its token's columns (null for a CLI key); undefined when there is no such key. */
export function keyWithOwner(db: Db, keyId: string): Promise<KeyRow | undefined> {
  return keyRows.get(db, keyId, async () => (await keyRow(db, keyId)).rows[0]);
}

/** Sets or clears an owner's suspension; true when it changed. */
export function setOwnerSuspended(db: Db, ownerId: number, suspendedAt: number | null): Promise<boolean> {
  return changeKeys(db, async (trx) => {
    const q = trx.updateTable('edge_owners').set({ suspended_at: suspendedAt }).where('id', '=', ownerId);
    const r = await (suspendedAt === null ? q.where('suspended_at', 'is not', null) : q.where('suspended_at', 'is', null)).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  });
}

/**
 * Revokes a key; false when it was revoked already or there is none. Those change nothing, and so bump nothing
 * (a bump makes every instance drop every kept key row).
 */
export async function revokeKey(db: Db, keyId: string): Promise<boolean> {
  const current = await db.selectFrom('edge_keys').select('revoked_at').where('key_id', '=', keyId).executeTakeFirst();
  if (current === undefined || current.revoked_at !== null) return false;
  return changeKeys(db, async (trx) => {
    const r = await trx.updateTable('edge_keys').set({ revoked_at: nowSeconds() }).where('key_id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  });
}

/** Every key (or one owner's), oldest first. */
export async function listKeys(db: Db, owner?: string) {
  let q = db
    .selectFrom('edge_keys')
    .innerJoin('edge_owners', 'edge_owners.id', 'edge_keys.owner_id')
    .select(['edge_keys.key_id', 'edge_owners.name as owner', 'edge_keys.created_at', 'edge_keys.revoked_at'])
    .orderBy('edge_keys.created_at')
    .orderBy('edge_keys.key_id');
  if (owner !== undefined) q = q.where('edge_owners.name', '=', owner);
  return q.execute();
}
