import { Type } from '@sinclair/typebox';
import { EDGE_GATEWAY_MODEL_PATTERN, EDGE_GROUP_PATTERN, EDGE_MODEL_ID_PATTERN, EDGE_OWNER_PATTERN } from '../../contract/edge-admin.js';

/** What GS22–GS34 answer (src/contract/edge-admin.ts has the port's types). Amounts are wallet units: 500,000 = 1 USD. */

const Str = Type.String();
const Int = Type.Integer();
const Bool = Type.Boolean();
const Time = Type.Union([Int, Type.Null()]);
/** Wallet units (integer, non-negative). */
const Units = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const Owner = Type.String({ pattern: EDGE_OWNER_PATTERN, maxLength: 64 });

export const EdgeStatusData = Type.Object({ served: Bool, admission_mode: Type.Union([Str, Type.Null()]), relay_configured: Bool });

export const EdgeModelData = Type.Object({
  public_model_id: Str,
  reserve_amount: Int,
  gateway_model: Type.Union([Str, Type.Null()]),
  group: Str,
  overdraft: Int,
  enabled: Bool,
  updated_at: Int,
});

export const EdgeModelBody = Type.Object({
  public_model_id: Type.String({ pattern: EDGE_MODEL_ID_PATTERN, maxLength: 128 }),
  reserve_amount: Units,
  gateway_model: Type.Optional(Type.Union([Type.String({ pattern: EDGE_GATEWAY_MODEL_PATTERN, maxLength: 255 }), Type.Null()])),
  group: Type.Optional(Type.String({ pattern: EDGE_GROUP_PATTERN, maxLength: 64 })),
  overdraft: Type.Optional(Units),
  enabled: Type.Optional(Bool),
});

export const EdgeKeyData = Type.Object({ key_id: Str, owner: Str, created_at: Int, revoked_at: Time });
export const EdgeIssuedKeyData = Type.Object({ key_id: Str, owner: Str, key: Str });

export const EdgeWalletData = Type.Object({
  owner: Str,
  wallet_id: Str,
  balance: Int,
  reserved: Int,
  available: Int,
  settled_runs: Int,
  settled_reserved: Int,
  settled_charged: Int,
  updated_at: Int,
});

export const EdgeUsageData = Type.Object({
  owner: Str,
  days: Int,
  lines: Type.Array(
    Type.Object({ day: Str, model: Str, calls: Int, failed: Int, prompt_tokens: Int, completion_tokens: Int, cost: Int }),
  ),
});

export const EdgeWebhookData = Type.Object({ endpoint_id: Str, owner: Str, url: Str, created_at: Int, removed_at: Time });
export const EdgeWebhookAddedData = Type.Object({ endpoint_id: Str, owner: Str, url: Str, secret: Str });
export const EdgeReplayData = Type.Object({ events: Int, queued: Int });

const NOT_SERVED = 'GW_EDGE_NOT_SERVED';
/** Catalog codes of GS22–GS34, by kind of operation. */
export const edgeAdminErrors = {
  read: [NOT_SERVED],
  write: [NOT_SERVED, 'EDGE_ADMIN_INVALID'],
  secret: [NOT_SERVED, 'EDGE_ADMIN_INVALID', 'GW_PROOF_REQUIRED', 'GW_PROOF_INVALID'],
  credit: [NOT_SERVED, 'EDGE_ADMIN_INVALID', 'IDEMPOTENCY_KEY_INVALID', 'IDEMPOTENCY_KEY_REUSED'],
  usage: [NOT_SERVED, 'EDGE_ADMIN_INVALID', 'EDGE_OWNER_NOT_FOUND'],
  revoke: [NOT_SERVED, 'EDGE_KEY_NOT_FOUND'],
  remove: [NOT_SERVED, 'EDGE_WEBHOOK_NOT_FOUND'],
  replay: [NOT_SERVED, 'EDGE_ADMIN_INVALID', 'EDGE_EVENT_NOT_FOUND'],
};
