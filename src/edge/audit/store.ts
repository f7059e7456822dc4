import type { Db } from '../keys/store.js';
import { nowSeconds } from '../db.js';

/** Records a change made by `actor` (`cli:<user>`, `staff:<name>`): names and counts in `detail`, never a secret. */
export async function appendAudit(db: Db, actor: string, operation: string, detail: Record<string, unknown>) {
  await db
    .insertInto('edge_audit')
    .values({ actor: actor.slice(0, 80), operation, detail: JSON.stringify(detail), created_at: nowSeconds() } as never)
    .execute();
}

/** The newest `limit` audit rows, newest first. */
export async function readAudit(db: Db, limit: number) {
  return db.selectFrom('edge_audit').selectAll().orderBy('id', 'desc').limit(limit).execute();
}
