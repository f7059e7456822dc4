import type { Db } from '../keys/store.js';
import { nowSeconds } from '../db.js';

export async function modelOf(db: Db, publicModelId: string) {
  return db.selectFrom('edge_models').selectAll().where('public_model_id', '=', publicModelId).executeTakeFirst();
}

export async function setModel(db: Db, publicModelId: string, reserveAmount: number, enabled: boolean) {
  const values = { reserve_amount: reserveAmount, enabled: enabled ? 1 : 0, updated_at: nowSeconds() };
  await db
    .insertInto('edge_models')
    .values({ public_model_id: publicModelId, ...values })
    .onConflict((oc) => oc.column('public_model_id').doUpdateSet(values))
    .execute();
}

export async function listModels(db: Db) {
  return db.selectFrom('edge_models').selectAll().orderBy('public_model_id').execute();
}
