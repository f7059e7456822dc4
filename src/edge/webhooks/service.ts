import crypto from 'node:crypto';
import { open, seal } from '../../kit/crypto/aead.js';
import type { EdgeContext } from '../context.js';
import { nowSeconds } from '../db.js';
import { checkOwnerName } from '../keys/service.js';
import { ensureOwner, type Db } from '../keys/store.js';
import { eventsOf } from '../outbox/store.js';
import { newSigningSecret } from './signing.js';
import { activeEndpointsOf, insertWebhook, listWebhooks, removeWebhook, requeue } from './store.js';

const AAD = 'edge-webhook-secret';

/** Why `url` cannot be an endpoint (null: it can). */
export function webhookUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an absolute http:// or https:// URL';
  if (u.username || u.password) return 'must not carry credentials';
  return null;
}

/** Webhook endpoints of owners (CLI) and replay of events to them. */
export class WebhookService {
  constructor(private readonly ctx: EdgeContext) {}

  /** Adds an endpoint; the signing secret is returned once (stored sealed, never shown again). */
  async add(owner: string, url: string, db: Db = this.ctx.db) {
    checkOwnerName(owner);
    const problem = webhookUrlProblem(url);
    if (problem) throw new Error(`--url ${problem}`);
    const u = new URL(url);
    const ownerId = await ensureOwner(db, owner);
    const secret = newSigningSecret();
    const endpointId = crypto.randomUUID();
    await insertWebhook(db, { endpoint_id: endpointId, owner_id: ownerId, url: u.toString(), secret: seal(this.ctx.secretKey, secret, AAD), created_at: nowSeconds() });
    return { endpointId, owner, url: u.toString(), secret };
  }

  list() {
    return listWebhooks(this.ctx.db);
  }

  remove(endpointId: string, db: Db = this.ctx.db) {
    return removeWebhook(db, endpointId, nowSeconds());
  }

  openSecret(sealed: string): string {
    return open(this.ctx.secretKey, sealed, AAD);
  }

  /**
   * Queues events again (one by id, or every event from a sequence number on) to each current endpoint of
   * their owner. A delivery in progress (leased) is left alone. Returns how many deliveries were queued.
   */
  async replay(where: { eventId?: string; sinceSequence?: number }): Promise<{ events: number; queued: number }> {
    const events = await eventsOf(this.ctx.db, where);
    let queued = 0;
    const now = Date.now();
    for (const e of events) {
      for (const w of await activeEndpointsOf(this.ctx.db, Number(e.owner_id))) if (await requeue(this.ctx.db, e.event_id, w.endpoint_id, now)) queued++;
    }
    return { events: events.length, queued };
  }
}
