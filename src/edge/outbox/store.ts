import crypto from 'node:crypto';
import { keptPerDatabase } from '../../kit/cache/kept-reads.js';
import { prepared } from '../../kit/db/prepared.js';
import type { Db } from '../keys/store.js';

export interface NewEvent {
  type:
    | 'run.created@2.0'
    | 'wallet.reserved@2.0'
    | 'run.started@1'
    | 'run.completed@1'
    | 'run.failed@1'
    | 'run.cancelled@1'
    | 'wallet.settled@1'
    | 'billing.finalization-reconciliation-resolution.applied@1';
  aggregateId: string;
  aggregateRevision: number;
  ownerId: number;
  payload: Record<string, unknown>;
  traceparent: string | null;
}

// Both run for every reservation and settlement (see prepared()).
const endpointRows = prepared((db: Db, ownerId: number) => db.selectFrom('edge_webhooks').select('endpoint_id').where('owner_id', '=', ownerId).where('removed_at', 'is', null));
const insertEvent = prepared((db: Db, event_id: string, type: string, aggregate_id: string, aggregate_revision: number, owner_id: number, payload: string, traceparent: string | null, created_at: number) =>
  db.insertInto('edge_outbox').values({ event_id, type, aggregate_id, aggregate_revision, owner_id, payload, traceparent, created_at } as never),
);

/**
 * An owner's endpoints, kept 1 s per database (kit/cache/kept-reads.ts, which the events of every transaction
 * share): an endpoint added or removed by another instance counts for its events within that time, one changed
 * here at once (webhooksChanged).
 */
const endpointsByOwner = keptPerDatabase<number, string[]>(1000);

/** The owner's current webhook endpoints (look them up once for the events of one transaction). */
export async function endpointsOf(trx: Db, ownerId: number): Promise<string[]> {
  const read = async () => (await endpointRows(trx, ownerId)).rows.map((r) => r.endpoint_id);
  return (await endpointsByOwner.get(trx, ownerId, read))!;
}

/** Every writer of webhook endpoints calls this after its change. */
export const webhooksChanged = endpointsByOwner.forget;

/**
 * Appends an immutable event inside the caller's transaction and queues one delivery of it to each of
 * the owner's current webhook endpoints (same transaction: no event without its deliveries, none without
 * the change it describes).
 */
export async function appendEvent(trx: Db, e: NewEvent, now = Date.now(), endpoints?: string[]): Promise<string> {
  const eventId = crypto.randomUUID();
  await insertEvent(trx, eventId, e.type, e.aggregateId, e.aggregateRevision, e.ownerId, JSON.stringify(e.payload), e.traceparent, now);
  const targets = endpoints ?? (await endpointsOf(trx, e.ownerId));
  if (targets.length) {
    await trx
      .insertInto('edge_deliveries')
      .values(targets.map((endpoint_id) => ({ event_id: eventId, endpoint_id, status: 'pending' as const, attempts: 0, next_attempt_at: now, created_at: now })) as never)
      .execute();
  }
  return eventId;
}

export async function eventsOf(db: Db, where: { eventId?: string; sinceSequence?: number }) {
  let q = db.selectFrom('edge_outbox').selectAll().orderBy('sequence');
  if (where.eventId !== undefined) q = q.where('event_id', '=', where.eventId);
  if (where.sinceSequence !== undefined) q = q.where('sequence', '>=', where.sinceSequence);
  return q.execute();
}
