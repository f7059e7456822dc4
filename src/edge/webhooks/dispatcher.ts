import os from 'node:os';
import { open } from '../../kit/crypto/aead.js';
import { randomToken } from '../../kit/crypto/tokens.js';
import { UpstreamError } from '../../kit/upstream/errors.js';
import type { EdgeContext } from '../context.js';
import { childTraceparent, sign } from './signing.js';
import { claim, deliveryWithEvent, dueDeliveries, finishAttempt, recordAttempt } from './store.js';

/**
 * Delivers queued events to webhook endpoints, at least once. A delivery is leased (lease_until) by one
 * dispatcher before it is sent, so two dispatchers never send the same row at the same time; a crashed
 * dispatcher's lease simply expires and another one takes the row. Failures are retried with exponential
 * backoff and full jitter up to EDGE_WEBHOOK_MAX_ATTEMPTS, then the delivery is `dead` (replay re-queues it).
 */
export class Dispatcher {
  readonly name = `${os.hostname()}:${process.pid}:${randomToken(6)}`.slice(-64);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;

  constructor(private readonly ctx: EdgeContext) {}

  start() {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.runOnce()
        .catch((e: Error) => this.ctx.log.warn({ err: { message: e.message } }, 'edge dispatcher: pass failed'))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.timer = setTimeout(tick, this.ctx.config.edge.dispatcher.intervalMs);
        });
    };
    tick();
  }

  async stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: claims the due deliveries (up to EDGE_DISPATCH_BATCH) and sends them in parallel. Returns how many were sent. */
  async runOnce(): Promise<number> {
    const { batch, leaseMs } = this.ctx.config.edge.dispatcher;
    const now = Date.now();
    const claimed: number[] = [];
    for (const d of await dueDeliveries(this.ctx.db, now, batch)) {
      if (await claim(this.ctx.db, Number(d.id), this.name, now, now + leaseMs)) claimed.push(Number(d.id));
    }
    await Promise.all(claimed.map((id) => this.deliver(id)));
    return claimed.length;
  }

  /** Runs passes until nothing is due (for `edge dispatch --once` and tests). */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.runOnce(); n > 0; n = await this.runOnce()) total += n;
    return total;
  }

  private backoff(attempts: number): number {
    const { backoffMs, backoffMaxMs } = this.ctx.config.edge.webhook;
    const ceiling = Math.min(backoffMaxMs, backoffMs * 2 ** Math.min(attempts - 1, 30));
    return Math.max(1, Math.round(ceiling / 2 + Math.random() * (ceiling / 2)));
  }

  private async deliver(id: number) {
    const d = await deliveryWithEvent(this.ctx.db, id);
    if (!d) return;
    const attempt = Number(d.attempts) + 1;
    const startedAt = Date.now();
    if (d.removed_at !== null) {
      await finishAttempt(this.ctx.db, { id, owner: this.name, status: 'cancelled', attempts: Number(d.attempts), nextAttemptAt: startedAt, error: 'endpoint removed', deliveredAt: null });
      this.ctx.metrics.delivered('cancelled');
      return;
    }
    const body = JSON.stringify({
      id: d.event_id,
      type: d.type,
      timestamp: new Date(Number(d.created_at)).toISOString(),
      sequence: Number(d.sequence),
      aggregateId: d.aggregate_id,
      aggregateRevision: Number(d.aggregate_revision),
      data: JSON.parse(d.payload),
    });
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const secret = open(this.ctx.secretKey, d.secret, 'edge-webhook-secret');
      const timestamp = Math.floor(startedAt / 1000);
      const traceparent = childTraceparent(d.traceparent);
      const res = await this.ctx.upstream.request({
        url: d.url,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'new-api-edge-webhooks/1',
          'webhook-id': d.event_id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': sign(secret, d.event_id, timestamp, body),
          ...(traceparent ? { traceparent } : {}),
        },
        body,
      });
      statusCode = res.status;
      if (res.status < 200 || res.status > 299) error = `receiver answered HTTP ${res.status}`;
    } catch (e) {
      // Never the URL, a header or the secret: the upstream client's details name none of them.
      error = e instanceof UpstreamError ? `${e.kind}: ${e.detail}` : 'signing secret could not be opened (EDGE_SECRET_KEY changed?)';
    }
    const finishedAt = Date.now();
    await recordAttempt(this.ctx.db, { delivery_id: id, attempt, dispatcher: this.name, status_code: statusCode, error, started_at: startedAt, finished_at: finishedAt });
    const dead = error !== null && attempt >= this.ctx.config.edge.webhook.maxAttempts;
    await finishAttempt(this.ctx.db, {
      id,
      owner: this.name,
      status: error === null ? 'delivered' : dead ? 'dead' : 'pending',
      attempts: attempt,
      nextAttemptAt: error === null || dead ? finishedAt : finishedAt + this.backoff(attempt),
      error,
      deliveredAt: error === null ? finishedAt : null,
    });
    this.ctx.metrics.delivered(error === null ? 'delivered' : dead ? 'dead' : 'failed');
    if (error) this.ctx.log.info({ delivery: id, event: d.event_id, attempt, dead, error }, 'edge webhook delivery failed');
  }
}
