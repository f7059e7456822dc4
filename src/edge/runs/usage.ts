import type { Db } from '../keys/store.js';
import { usageRows } from './store.js';

export interface UsageLine {
  day: string;
  model: string;
  calls: number;
  failed: number;
  promptTokens: number;
  completionTokens: number;
  cost: number;
}

/** An owner's ended runs per UTC day and public model, oldest first. */
export async function ownerUsage(db: Db, ownerId: number, days: number): Promise<UsageLine[]> {
  const from = Date.now() - days * 86400_000;
  const lines = new Map<string, UsageLine>();
  for (const r of await usageRows(db, ownerId, from)) {
    const day = new Date(Number(r.finished_at)).toISOString().slice(0, 10);
    const key = `${day}\u0000${r.public_model_id}`;
    const line = lines.get(key) ?? { day, model: r.public_model_id, calls: 0, failed: 0, promptTokens: 0, completionTokens: 0, cost: 0 };
    line.calls++;
    if (r.status !== 'succeeded') line.failed++;
    line.promptTokens += Number(r.prompt_tokens);
    line.completionTokens += Number(r.completion_tokens);
    line.cost += Number(r.cost);
    lines.set(key, line);
  }
  return [...lines.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : a.model < b.model ? -1 : 1));
}

/** Everything settled for an owner: runs, what they reserved and what was charged. */
export async function settledTotals(db: Db, ownerId: number) {
  return (await settledByOwner(db, ownerId)).get(ownerId) ?? { runs: 0, reserved: 0, charged: 0 };
}

/** The settled totals of one owner, or of every owner that has any. */
export async function settledByOwner(db: Db, ownerId?: number) {
  let q = db
    .selectFrom('edge_settlements')
    .select((eb) => ['owner_id', eb.fn.countAll<number>().as('runs'), eb.fn.sum<number>('reserved').as('reserved'), eb.fn.sum<number>('charged').as('charged')])
    .groupBy('owner_id');
  if (ownerId !== undefined) q = q.where('owner_id', '=', ownerId);
  const out = new Map<number, { runs: number; reserved: number; charged: number }>();
  for (const r of await q.execute()) out.set(Number(r.owner_id), { runs: Number(r.runs), reserved: Number(r.reserved ?? 0), charged: Number(r.charged ?? 0) });
  return out;
}
