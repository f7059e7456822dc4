import type { Kysely } from 'kysely';
import { STATUS } from '../channels/types.js';
import type { GatewayDB } from '../db.js';

type Db = Kysely<GatewayDB>;

/**
 * Enabled channels whose settings mention the opt-in field, in id order after `afterId` (a superset of the
 * opted-in ones: the caller reads the flag from the JSON). Never selects the key.
 */
function candidates(db: Db) {
  return db.selectFrom('channels').where('status', '=', STATUS.enabled).where('settings', 'like', '%upstream_model_update_check_enabled%');
}

export async function candidatePage(db: Db, afterId: number, limit: number) {
  const rows = await candidates(db).select(['id', 'name', 'settings']).where('id', '>', afterId).orderBy('id').limit(limit).execute();
  return rows.map((r) => ({ id: Number(r.id), name: r.name, settings: r.settings }));
}

export async function countCandidates(db: Db): Promise<number> {
  const row = await candidates(db).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}
