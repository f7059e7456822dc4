import type { Kysely } from 'kysely';
import type { GatewayDB } from '../db.js';
import { nowSeconds } from '../db.js';

export interface Actor {
  id: number;
  name: string;
}

/** Records one write or key reveal. `detail` carries names, counts and field names, never key values. */
export async function audit(db: Kysely<GatewayDB>, actor: Actor, operation: string, channelId: number | null, detail: Record<string, unknown> = {}) {
  await db
    .insertInto('gateway_audit')
    .values({ actor_id: actor.id, actor_name: actor.name, operation, channel_id: channelId, detail: JSON.stringify(detail), created_at: nowSeconds() } as never)
    .execute();
}

export async function readAudit(db: Kysely<GatewayDB>, opts: { limit: number; channelId?: number }) {
  let q = db.selectFrom('gateway_audit').selectAll().orderBy('id', 'desc').limit(opts.limit);
  if (opts.channelId !== undefined) q = q.where('channel_id', '=', opts.channelId);
  return q.execute();
}
