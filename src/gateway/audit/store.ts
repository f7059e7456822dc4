import type { Kysely } from 'kysely';
import { AppError } from '../../kit/http/errors.js';
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

export interface AuditFilter {
  operation?: string;
  actor?: string;
  channelId?: number;
  /** Unix seconds, inclusive. */
  from?: number;
  to?: number;
}

/** One page of the audit log, newest first, and how many rows match the filter. */
export async function searchAudit(db: Kysely<GatewayDB>, f: AuditFilter, page: number, pageSize: number) {
  let q = db.selectFrom('gateway_audit');
  if (f.operation) q = q.where('operation', '=', f.operation);
  if (f.actor) q = q.where('actor_name', '=', f.actor);
  if (f.channelId !== undefined) q = q.where('channel_id', '=', f.channelId);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<=', f.to);
  const [items, count] = await Promise.all([
    q.selectAll().orderBy('id', 'desc').limit(pageSize).offset((page - 1) * pageSize).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.n) };
}

/**
 * Runs `run` and records the operation either way: `ok: true`, or the failure's error code (never its
 * text, which may carry upstream words). The outcome is passed on unchanged.
 */
export async function audited<T>(
  db: Kysely<GatewayDB>,
  actor: Actor,
  operation: string,
  channelId: number | null,
  detail: Record<string, unknown>,
  run: () => Promise<T>,
  describe: (result: T) => Record<string, unknown> = () => ({ ok: true }),
): Promise<T> {
  try {
    const result = await run();
    await audit(db, actor, operation, channelId, { ...detail, ...describe(result) });
    return result;
  } catch (e) {
    await audit(db, actor, operation, channelId, { ...detail, failed: e instanceof AppError ? e.code : 'error' });
    throw e;
  }
}
