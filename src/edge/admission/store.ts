import { prepared } from '../../kit/db/prepared.js';
import type { Db } from '../keys/store.js';

// Every admission writes one (see prepared()).
const insertKey = prepared((db: Db, ownerId: number, key: string, bodyHash: string, response: string, createdAt: number) =>
  db.insertInto('edge_idempotency').values({ owner_id: ownerId, key, body_hash: bodyHash, response, created_at: createdAt }),
);

export async function insertIdempotency(trx: Db, row: { owner_id: number; key: string; body_hash: string; response: string; created_at: number }) {
  await insertKey(trx, row.owner_id, row.key, row.body_hash, row.response, row.created_at);
}

export async function idempotencyOf(db: Db, ownerId: number, key: string) {
  return db.selectFrom('edge_idempotency').selectAll().where('owner_id', '=', ownerId).where('key', '=', key).executeTakeFirst();
}

/** Forgets keys older than the TTL (so the table holds one TTL of keys; an expired key may be used again). */
export async function dropExpiredIdempotency(db: Db, olderThanSeconds: number) {
  await db.deleteFrom('edge_idempotency').where('created_at', '<', olderThanSeconds).execute();
}
