import type { Db } from '../keys/store.js';
import { webhooksChanged } from '../outbox/store.js';
import type { DeliveryStatus } from '../db.js';

export async function insertWebhook(db: Db, row: { endpoint_id: string; owner_id: number; url: string; secret: string; created_at: number }) {
  await db.insertInto('edge_webhooks').values({ ...row, removed_at: null } as never).execute();
  webhooksChanged();
}

export async function listWebhooks(db: Db) {
  return db
    .selectFrom('edge_webhooks')
    .innerJoin('edge_owners', 'edge_owners.id', 'edge_webhooks.owner_id')
    .select(['edge_webhooks.endpoint_id', 'edge_owners.name as owner', 'edge_webhooks.url', 'edge_webhooks.created_at', 'edge_webhooks.removed_at'])
    .orderBy('edge_webhooks.id')
    .execute();
}

export async function removeWebhook(db: Db, endpointId: string, now: number): Promise<boolean> {
  const r = await db.updateTable('edge_webhooks').set({ removed_at: now }).where('endpoint_id', '=', endpointId).where('removed_at', 'is', null).executeTakeFirst();
  webhooksChanged();
  return Number(r.numUpdatedRows) === 1;
}

export async function activeEndpointsOf(db: Db, ownerId: number) {
  return db.selectFrom('edge_webhooks').select('endpoint_id').where('owner_id', '=', ownerId).where('removed_at', 'is', null).execute();
}

/** Due deliveries nobody holds (no lease, or an expired one), oldest first. */
export async function dueDeliveries(db: Db, now: number, limit: number) {
  return db
    .selectFrom('edge_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Takes the lease of one delivery if it is still free: one conditional update, so one dispatcher wins. */
export async function claim(db: Db, id: number, owner: string, now: number, until: number): Promise<boolean> {
  const r = await db
    .updateTable('edge_deliveries')
    .set({ lease_owner: owner, lease_until: until })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function deliveryWithEvent(db: Db, id: number) {
  return db
    .selectFrom('edge_deliveries')
    .innerJoin('edge_outbox', 'edge_outbox.event_id', 'edge_deliveries.event_id')
    .innerJoin('edge_webhooks', 'edge_webhooks.endpoint_id', 'edge_deliveries.endpoint_id')
    .select([
      'edge_deliveries.id',
      'edge_deliveries.attempts',
      'edge_outbox.event_id',
      'edge_outbox.sequence',
      'edge_outbox.type',
      'edge_outbox.aggregate_id',
      'edge_outbox.aggregate_revision',
      'edge_outbox.payload',
      'edge_outbox.traceparent',
      'edge_outbox.created_at',
      'edge_webhooks.url',
      'edge_webhooks.secret',
      'edge_webhooks.removed_at',
    ])
    .where('edge_deliveries.id', '=', id)
    .executeTakeFirst();
}

/** Ends one attempt under the lease it was made with (a lease taken over meanwhile keeps the new holder's state). */
export async function finishAttempt(
  db: Db,
  d: { id: number; owner: string; status: DeliveryStatus; attempts: number; nextAttemptAt: number; error: string | null; deliveredAt: number | null },
) {
  await db
    .updateTable('edge_deliveries')
    .set({ status: d.status, attempts: d.attempts, next_attempt_at: d.nextAttemptAt, last_error: d.error, delivered_at: d.deliveredAt, lease_owner: null, lease_until: null })
    .where('id', '=', d.id)
    .where('lease_owner', '=', d.owner)
    .execute();
}

export async function recordAttempt(db: Db, row: { delivery_id: number; attempt: number; dispatcher: string; status_code: number | null; error: string | null; started_at: number; finished_at: number }) {
  await db.insertInto('edge_delivery_attempts').values(row as never).execute();
}

/** Queues an event again for one endpoint: a new pending delivery, or the existing one reset (unless it is leased now). */
export async function requeue(db: Db, eventId: string, endpointId: string, now: number): Promise<boolean> {
  const existing = await db.selectFrom('edge_deliveries').select(['id', 'lease_until']).where('event_id', '=', eventId).where('endpoint_id', '=', endpointId).executeTakeFirst();
  if (!existing) {
    await db.insertInto('edge_deliveries').values({ event_id: eventId, endpoint_id: endpointId, status: 'pending', attempts: 0, next_attempt_at: now, created_at: now } as never).execute();
    return true;
  }
  const r = await db
    .updateTable('edge_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: now, last_error: null })
    .where('id', '=', existing.id)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function deliveriesOf(db: Db, eventId: string) {
  return db.selectFrom('edge_deliveries').selectAll().where('event_id', '=', eventId).orderBy('id').execute();
}

export async function attemptsOf(db: Db, deliveryId: number) {
  return db.selectFrom('edge_delivery_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('id').execute();
}
