import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { implement, NoData, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { AppError } from '../../kit/http/errors.js';
import type { GatewayContext } from '../context.js';
import { securityProofOf, staffOf } from '../auth.js';
import { once } from '../idempotency.js';
import { STAFF_SECRET_SCOPE, type ProofService } from '../staff/proofs.js';
import type { EdgeAdminService } from './service.js';
import {
  EdgeIssuedKeyData,
  EdgeKeyData,
  EdgeModelBody,
  EdgeModelData,
  EdgeReplayData,
  EdgeStatusData,
  EdgeUsageData,
  EdgeWalletData,
  EdgeWebhookAddedData,
  EdgeWebhookData,
  Owner,
  edgeAdminErrors as E,
} from './schemas.js';

const KeyId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });
const EndpointId = Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$' });

/** Only the host of an endpoint's URL is audited (its path or query may carry a receiver's token). */
function hostOf(url: string) {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** GS22–GS34: the edge's public models, keys, wallets, usage and webhooks (root staff; the edge served here). */
export function edgeAdminRoutes(ctx: GatewayContext, edge: EdgeAdminService, proofs: ProofService): OperationImpl<any>[] {
  /** A secret is answered once: a fresh step-up proof of scope StaffSecret (GS01) is consumed first. */
  const stepUp = (req: FastifyRequest, staffId: number) => proofs.consume(securityProofOf(req), staffId, STAFF_SECRET_SCOPE, 0);
  return [
    implement('GS22', {
      data: EdgeStatusData,
      handler: async () => {
        if (!edge.served) return ok({ served: false, admission_mode: null, relay_configured: false });
        return ok({ served: true, ...(await edge.read((p) => p.status())) });
      },
    }),
    implement('GS23', { data: Type.Array(EdgeModelData), errors: E.read, handler: async () => ok(await edge.read((p) => p.listModels())) }),
    implement('GS24', {
      data: EdgeModelData,
      errors: E.write,
      schema: { body: EdgeModelBody },
      handler: async (req) => {
        const b = req.body;
        const settings = { reserve_amount: b.reserve_amount, gateway_model: b.gateway_model || null, group: b.group ?? 'default', overdraft: b.overdraft ?? 0, enabled: b.enabled ?? true };
        return ok(await edge.write(staffOf(req), 'GS24', { public_model_id: b.public_model_id, ...settings }, (p, by) => p.setModel(b.public_model_id, settings, by)));
      },
    }),
    implement('GS25', {
      data: Type.Array(EdgeKeyData),
      errors: E.read,
      schema: { querystring: Type.Object({ owner: Type.Optional(Type.String({ maxLength: 64 })) }) },
      handler: async (req) => ok(await edge.read((p) => p.listKeys(req.query.owner || undefined))),
    }),
    implement('GS26', {
      data: EdgeIssuedKeyData,
      errors: E.secret,
      noStore: true,
      schema: { body: Type.Object({ owner: Owner }) },
      handler: async (req) => {
        const actor = staffOf(req);
        if (!edge.served) throw new AppError('GW_EDGE_NOT_SERVED');
        await stepUp(req, actor.id);
        return ok(await edge.write(actor, 'GS26', { owner: req.body.owner }, (p, by) => p.issueKey(req.body.owner, by), (k) => ({ key_id: k.key_id })));
      },
    }),
    implement('GS27', {
      data: NoData,
      errors: E.revoke,
      schema: { params: Type.Object({ key_id: KeyId }) },
      handler: async (req) => {
        await edge.write(staffOf(req), 'GS27', { key_id: req.params.key_id }, async (p, by) => {
          if (!(await p.revokeKey(req.params.key_id, by))) throw new AppError('EDGE_KEY_NOT_FOUND');
        });
        return ok();
      },
    }),
    implement('GS28', { data: Type.Array(EdgeWalletData), errors: E.read, handler: async () => ok(await edge.read((p) => p.listWallets())) }),
    implement('GS29', {
      data: EdgeWalletData,
      errors: E.credit,
      schema: { params: Type.Object({ owner: Owner }), body: Type.Object({ amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }) },
      handler: async (req) => {
        const actor = staffOf(req);
        if (!edge.served) throw new AppError('GW_EDGE_NOT_SERVED');
        const { owner } = req.params;
        // With an Idempotency-Key a repeated credit answers the first one's wallet and adds nothing: the gateway
        // remembers the key, and the edge the credit id made of it, in the credit's own transaction (a retry after
        // the gateway failed to record a credit the edge made credits nothing).
        const key = req.headers['idempotency-key'];
        const creditId = typeof key === 'string' ? `staff:${actor.id}:${key}` : undefined;
        const w = await once(ctx, req, actor.id, 'GS29', (trx) =>
          edge.write(actor, 'GS29', { owner, amount: req.body.amount }, (p, by) => p.credit(owner, req.body.amount, by, creditId), (r) => ({ balance: r.balance }), trx),
        );
        return ok(w);
      },
    }),
    implement('GS30', {
      data: EdgeUsageData,
      errors: E.usage,
      schema: { querystring: Type.Object({ owner: Owner, days: Type.Optional(Type.Integer({ minimum: 1, maximum: 366 })) }) },
      handler: async (req) => {
        const days = req.query.days ?? 30;
        const lines = await edge.read((p) => p.usage(req.query.owner, days));
        if (!lines) throw new AppError('EDGE_OWNER_NOT_FOUND');
        return ok({ owner: req.query.owner, days, lines });
      },
    }),
    implement('GS31', { data: Type.Array(EdgeWebhookData), errors: E.read, handler: async () => ok(await edge.read((p) => p.listWebhooks())) }),
    implement('GS32', {
      data: EdgeWebhookAddedData,
      errors: E.secret,
      noStore: true,
      schema: { body: Type.Object({ owner: Owner, url: Type.String({ minLength: 1, maxLength: 2048 }) }) },
      handler: async (req) => {
        const actor = staffOf(req);
        if (!edge.served) throw new AppError('GW_EDGE_NOT_SERVED');
        await stepUp(req, actor.id);
        const { owner, url } = req.body;
        return ok(await edge.write(actor, 'GS32', { owner, host: hostOf(url) }, (p, by) => p.addWebhook(owner, url, by), (w) => ({ endpoint_id: w.endpoint_id })));
      },
    }),
    implement('GS33', {
      data: NoData,
      errors: E.remove,
      schema: { params: Type.Object({ endpoint_id: EndpointId }) },
      handler: async (req) => {
        await edge.write(staffOf(req), 'GS33', { endpoint_id: req.params.endpoint_id }, async (p, by) => {
          if (!(await p.removeWebhook(req.params.endpoint_id, by))) throw new AppError('EDGE_WEBHOOK_NOT_FOUND');
        });
        return ok();
      },
    }),
    implement('GS34', {
      data: EdgeReplayData,
      errors: E.replay,
      schema: {
        body: Type.Object({
          event_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          since: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
        }),
      },
      handler: async (req) => {
        const { event_id, since } = req.body;
        if ((event_id === undefined) === (since === undefined)) throw new AppError('EDGE_ADMIN_INVALID', { params: { detail: 'give exactly one of event_id and since' } });
        const where = event_id !== undefined ? { eventId: event_id } : { sinceSequence: since };
        const r = await edge.write(staffOf(req), 'GS34', { event_id: event_id ?? null, since: since ?? null }, async (p) => {
          const done = await p.replay(where);
          if (event_id !== undefined && done.events === 0) throw new AppError('EDGE_EVENT_NOT_FOUND');
          return done;
        }, (d) => d);
        return ok(r);
      },
    }),
  ];
}
