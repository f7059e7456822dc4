import type { Kysely } from 'kysely';
import type { GatewayDB } from './db.js';
import { nowSeconds } from './db.js';

/**
 * A named lease in gateway_meta, held by whoever inserted its row until it expires or is released: one
 * holder at a time across every instance sharing the database, with no transaction held meanwhile.
 */
export async function tryLease(db: Kysely<GatewayDB>, name: string, ttlSeconds: number): Promise<boolean> {
  const now = nowSeconds();
  await db.deleteFrom('gateway_meta').where('key', '=', name).where('value', '<', String(now)).execute();
  const r = await db.insertInto('gateway_meta').values({ key: name, value: String(now + ttlSeconds) }).onConflict((oc) => oc.column('key').doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function releaseLease(db: Kysely<GatewayDB>, name: string) {
  await db.deleteFrom('gateway_meta').where('key', '=', name).execute();
}
