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

const EVENT_COLUMNS = 8;
type EventRow = [event_id: string, type: string, aggregate_id: string, aggregate_revision: number, owner_id: number, payload: string, traceparent: string | null, created_at: number];

/** One INSERT of `count` events, built and compiled once per count (a reservation writes 2, a settlement 3). */
const insertEventsOf = (count: number) =>
  prepared((db: Db, ...values: unknown[]) =>
    db.insertInto('edge_outbox').values(
      Array.from({ length: count }, (_, i) => {
        const [event_id, type, aggregate_id, aggregate_revision, owner_id, payload, traceparent, created_at] = values.slice(i * EVENT_COLUMNS, (i + 1) * EVENT_COLUMNS) as EventRow;
        return { event_id, type, aggregate_id, aggregate_revision, owner_id, payload, traceparent, created_at };
      }) as never,
    ),
  );
const insertEvents = new Map<number, ReturnType<typeof insertEventsOf>>();

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
  return (await appendEvents(trx, [e], now, endpoints))[0]!;
}

/**
 * appendEvent for events of one owner written together: one INSERT of the events (in their order, so their
 * sequences follow it) and one of their deliveries; answers their ids.
 */
export async function appendEvents(trx: Db, events: NewEvent[], now = Date.now(), endpoints?: string[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids: string[] = [];
  const values: unknown[] = [];
  for (const e of events) {
    const eventId = crypto.randomUUID();
    ids.push(eventId);
    values.push(eventId, e.type, e.aggregateId, e.aggregateRevision, e.ownerId, JSON.stringify(e.payload), e.traceparent, now);
  }
  let insert = insertEvents.get(events.length);
  if (!insert) insertEvents.set(events.length, (insert = insertEventsOf(events.length)));
  await insert(trx, ...values);
  const targets = endpoints ?? (await endpointsOf(trx, events[0]!.ownerId));
  if (targets.length) {
    const deliveries = ids.flatMap((event_id) => targets.map((endpoint_id) => ({ event_id, endpoint_id, status: 'pending' as const, attempts: 0, next_attempt_at: now, created_at: now })));
    await trx.insertInto('edge_deliveries').values(deliveries as never).execute();
  }
  return ids;
}

export async function eventsOf(db: Db, where: { eventId?: string; sinceSequence?: number }) {
  let q = db.selectFrom('edge_outbox').selectAll().orderBy('sequence');
  if (where.eventId !== undefined) q = q.where('event_id', '=', where.eventId);
  if (where.sinceSequence !== undefined) q = q.where('sequence', '>=', where.sinceSequence);
  return q.execute();
}
