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

/**
 * Key rows are read on every request: kept 500 ms per database (kit/cache/kept-reads.ts), so a change made by
 * another instance (a revoked key, a disabled or changed token, a disabled user) is seen within it, and one made
 * here (forgetKeyRows) by the next request.
 */
const keyRows = keptPerDatabase<string, KeyRow>(500);

/** A key, its token or its owner changed here: the kept key rows are dropped. */
export const forgetKeyRows = keyRows.forget;

/** A key with its owner and its token's columns (null for a CLI key); undefined when there is no such key. */
export function keyWithOwner(db: Db, keyId: string): Promise<KeyRow | undefined> {
  return keyRows.get(db, keyId, async () => (await keyRow(db, keyId)).rows[0]);
}

/** Sets or clears an owner's suspension; true when it changed. */
export async function setOwnerSuspended(db: Db, ownerId: number, suspendedAt: number | null): Promise<boolean> {
  forgetKeyRows();
  const q = db.updateTable('edge_owners').set({ suspended_at: suspendedAt }).where('id', '=', ownerId);
  const r = await (suspendedAt === null ? q.where('suspended_at', 'is not', null) : q.where('suspended_at', 'is', null)).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function revokeKey(db: Db, keyId: string): Promise<boolean> {
  forgetKeyRows();
  const r = await db.updateTable('edge_keys').set({ revoked_at: nowSeconds() }).where('key_id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
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
