import { keptPerDatabase } from '../../kit/cache/kept-reads.js';
import type { Batch } from '../../kit/db/group-commit.js';
import { insertRows } from '../../kit/db/insert-rows.js';
import { prepared } from '../../kit/db/prepared.js';
import type { EdgeDB } from '../db.js';
import type { Db } from '../keys/store.js';
import { uuidV7 } from '../../kit/crypto/uuid7.js';

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

// Run for reservations and settlements of owners with endpoints (see prepared()).
const endpointRows = prepared((db: Db, ownerId: number) => db.selectFrom('edge_webhooks').select('endpoint_id').where('owner_id', '=', ownerId).where('removed_at', 'is', null));

const EVENT_COLUMNS = ['event_id', 'type', 'aggregate_id', 'aggregate_revision', 'owner_id', 'payload', 'traceparent', 'created_at'] as const;
const DELIVERY_COLUMNS = ['event_id', 'endpoint_id', 'status', 'attempts', 'next_attempt_at', 'created_at'] as const;
// Also the sinks of a ledger batch's events (queueEvents).
const insertEventRows = insertRows<EdgeDB>('edge_outbox', EVENT_COLUMNS);
const insertDeliveryRows = insertRows<EdgeDB>('edge_deliveries', DELIVERY_COLUMNS);

/** The rows of events and of their deliveries to `endpoints`, in the events' order (their sequences follow it). */
function rowsOf(events: NewEvent[], now: number, endpoints: string[]) {
  const ids: string[] = [];
  const eventRows: unknown[][] = [];
  const deliveryRows: unknown[][] = [];
  for (const e of events) {
    const eventId = uuidV7(now);
    ids.push(eventId);
    eventRows.push([eventId, e.type, e.aggregateId, e.aggregateRevision, e.ownerId, JSON.stringify(e.payload), e.traceparent, now]);
    for (const endpointId of endpoints) deliveryRows.push([eventId, endpointId, 'pending', 0, now, now]);
  }
  return { ids, eventRows, deliveryRows };
}

/**
 * An owner's endpoints, kept 1 s per database (kit/cache/kept-reads.ts, which the events of every transaction
 * share): an endpoint added or removed by another instance counts for its events within that time, one changed
 * here at once (webhooksChanged).
 */
const endpointsByOwner = keptPerDatabase<number, string[]>(1000);

/** Most owners with endpoints read in one statement; beyond it, each owner's endpoints are looked up. */
const MANY_OWNERS = 10_000;

/**
 * The owners that have endpoints, kept like endpointsByOwner: most owners have none, and so their calls look
 * up nothing (with many owners each owner's own kept read would mostly miss: a statement per call).
 * 'many': more than MANY_OWNERS.
 */
const ownersWithEndpoints = keptPerDatabase<0, Set<number> | 'many'>(1000);
const endpointOwnerRows = prepared((db: Db, limit: number) => db.selectFrom('edge_webhooks').select('owner_id').distinct().where('removed_at', 'is', null).limit(limit));

/** The owner's current webhook endpoints (look them up once for the events of one transaction). */
export async function endpointsOf(trx: Db, ownerId: number): Promise<string[]> {
  const owners = await ownersWithEndpoints.get(trx, 0, async () => {
    const rows = (await endpointOwnerRows(trx, MANY_OWNERS + 1)).rows;
    return rows.length > MANY_OWNERS ? 'many' : new Set(rows.map((r) => Number(r.owner_id)));
  });
  if (owners !== 'many' && !owners!.has(ownerId)) return [];
  const read = async () => (await endpointRows(trx, ownerId)).rows.map((r) => r.endpoint_id);
  return (await endpointsByOwner.get(trx, ownerId, read))!;
}

/** Every writer of webhook endpoints calls this after its change. */
export function webhooksChanged(): void {
  ownersWithEndpoints.forget();
  endpointsByOwner.forget();
}

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
  const rows = rowsOf(events, now, endpoints ?? (await endpointsOf(trx, events[0]!.ownerId)));
  await insertEventRows(trx, rows.eventRows);
  if (rows.deliveryRows.length) await insertDeliveryRows(trx, rows.deliveryRows);
  return rows.ids;
}

/**
 * appendEvents inside a ledger batch: the events and their deliveries are written with the batch's others, by
 * one INSERT each before its commit (kit/db/group-commit.ts Batch), in the order they were queued.
 */
export function queueEvents(batch: Batch<EdgeDB>, events: NewEvent[], now: number, endpoints: string[]): string[] {
  const rows = rowsOf(events, now, endpoints);
  batch.add(insertEventRows, ...rows.eventRows);
  if (rows.deliveryRows.length) batch.add(insertDeliveryRows, ...rows.deliveryRows);
  return rows.ids;
}

export async function eventsOf(db: Db, where: { eventId?: string; sinceSequence?: number }) {
  let q = db.selectFrom('edge_outbox').selectAll().orderBy('sequence');
  if (where.eventId !== undefined) q = q.where('event_id', '=', where.eventId);
  if (where.sinceSequence !== undefined) q = q.where('sequence', '>=', where.sinceSequence);
  return q.execute();
}
