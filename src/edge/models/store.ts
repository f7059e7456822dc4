import type { Db } from '../keys/store.js';
import { nowSeconds } from '../db.js';
import { keptPerDatabase } from '../../kit/cache/kept-reads.js';
import { prepared } from '../../kit/db/prepared.js';

export interface ModelSettings {
  reserveAmount: number;
  enabled: boolean;
  /** The model name asked of the gateway; null: the public id. */
  gatewayModel: string | null;
  group: string;
  overdraft: number;
}

// Runs on every call (see prepared()).
const modelRow = prepared((db: Db, publicModelId: string) => db.selectFrom('edge_models').selectAll().where('public_model_id', '=', publicModelId));

type ModelRow = Awaited<ReturnType<typeof modelRow>>['rows'][number];
/** Kept 1 s (kit/cache/kept-reads.ts): a change made by another instance is seen within it, one made here at once. */
const modelRows = keptPerDatabase<string, ModelRow>(1000);

export function modelOf(db: Db, publicModelId: string): Promise<ModelRow | undefined> {
  return modelRows.get(db, publicModelId, async () => (await modelRow(db, publicModelId)).rows[0]);
}

export async function setModel(db: Db, publicModelId: string, m: ModelSettings) {
  modelRows.forget();
  const values = { reserve_amount: m.reserveAmount, enabled: m.enabled ? 1 : 0, gateway_model: m.gatewayModel, group_name: m.group, overdraft: m.overdraft, updated_at: nowSeconds() };
  await db
    .insertInto('edge_models')
    .values({ public_model_id: publicModelId, ...values })
    .onConflict((oc) => oc.column('public_model_id').doUpdateSet(values))
    .execute();
}

export async function listModels(db: Db, enabledOnly = false) {
  let q = db.selectFrom('edge_models').selectAll().orderBy('public_model_id');
  if (enabledOnly) q = q.where('enabled', '=', 1);
  return q.execute();
}
