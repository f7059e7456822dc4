import type { Generated } from 'kysely';

/** Table types of the edge database (its own database; nothing else reads or writes it). */
export interface EdgeMetaTable {
  key: string;
  value: string;
}

/**
 * One row (id 1): a counter every change to an existing key row bumps in its transaction (a key revoked, its
 * token changed or deleted, its owner suspended or resumed); each instance watches it to keep key rows long
 * (keys/store.ts).
 */
export interface EdgeKeyChangesTable {
  id: number;
  changes: number;
}

/** An owner of developer keys, a wallet and webhook endpoints (the edge's own identities). */
export interface EdgeOwnerTable {
  id: number;
  name: string;
  created_at: number;
  /** Seconds since the epoch the owner's account user was disabled; null while enabled. */
  suspended_at: number | null;
}

/** A developer key svc_sk_<key_id>.<secret>: only the SHA-256 of the secret is kept. */
export interface EdgeKeyTable {
  key_id: string;
  owner_id: number;
  /** SHA-256 (hex) of the secret part. */
  secret_hash: string;
  created_at: number;
  revoked_at: number | null;
}

/** One wallet per owner, in integer units: `reserved` is held by admitted runs, available = balance - reserved. */
export interface EdgeWalletTable {
  owner_id: number;
  wallet_id: string;
  balance: number;
  reserved: number;
  /** Bumped on every change (credit, reservation); the aggregateRevision of wallet events. */
  revision: number;
  updated_at: number;
  /** new-api's used_quota and request_count: units charged and calls settled, kept by each settlement. */
  used_quota: Generated<number>;
  request_count: Generated<number>;
}

/** A public model id clients name, with the amount one request reserves. */
export interface EdgeModelTable {
  public_model_id: string;
  reserve_amount: number;
  enabled: number;
  updated_at: number;
  /** The model name the gateway relay is asked for; null: the public id. */
  gateway_model: string | null;
  /** The gateway channel group calls are routed in. */
  group_name: string;
  /** How much a call may cost beyond its reservation (from the available balance). */
  overdraft: number;
}

export type RunStatus = 'reserved' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const FINAL_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];

export interface EdgeRunTable {
  run_id: string;
  request_id: string;
  owner_id: number;
  key_id: string;
  public_model_id: string;
  input: string;
  api_version: string;
  reserved_amount: number;
  status: RunStatus;
  revision: number;
  traceparent: string | null;
  /** Milliseconds since the epoch (so are the other times of a run). */
  created_at: number;
  kind: 'async' | 'sync';
  /** The caller's format of a sync call (chat, responses, embeddings); an admitted run is 'responses'. */
  format: string;
  lease_owner: string | null;
  lease_until: number | null;
  attempts: number;
  cancel_requested: number;
  output: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  error_code: string | null;
  error_message: string | null;
  started_at: number | null;
  finished_at: number | null;
  deadline_at: number;
  /** The account user's token that made the call (0: a CLI key) and its name then. */
  token_id: number;
  token_name: string;
  /** 1: the answer was streamed. */
  stream: number;
}

export interface EdgeSettlementTable {
  run_id: string;
  owner_id: number;
  reserved: number;
  charged: number;
  outcome: string;
  /** Who settled: the worker, a sync call, a cancel, the expiry sweep or the reconciliation. */
  source: string;
  created_at: number;
}

export interface EdgeIdempotencyTable {
  owner_id: number;
  key: string;
  body_hash: string;
  /** The 202 body, JSON. */
  response: string;
  created_at: number;
}

/** Immutable events, written in the transaction of the change they describe. */
export interface EdgeOutboxTable {
  /** Monotonically increasing (insertion order). */
  sequence: number;
  event_id: string;
  type: string;
  aggregate_id: string;
  aggregate_revision: number;
  owner_id: number;
  payload: string;
  traceparent: string | null;
  created_at: number;
}

export interface EdgeWebhookTable {
  id: number;
  endpoint_id: string;
  owner_id: number;
  url: string;
  /** The signing secret (whsec_…), sealed with the edge key. */
  secret: string;
  created_at: number;
  removed_at: number | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'dead' | 'cancelled';

/** One event to one endpoint; leased by one dispatcher at a time. Times in milliseconds. */
export interface EdgeDeliveryTable {
  id: number;
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
}

export interface EdgeDeliveryAttemptTable {
  id: number;
  delivery_id: number;
  attempt: number;
  dispatcher: string;
  status_code: number | null;
  error: string | null;
  started_at: number;
  finished_at: number;
}

/** A wallet credit made with a credit id: it credits once; `wallet` is the answer (JSON) a retry gets again. */
export interface EdgeCreditTable {
  credit_id: string;
  owner_id: number;
  amount: number;
  wallet: string;
  created_at: number;
  /** credit (CLI, console), topup (a redeemed code), adjust (an admin's edit), signup, import. */
  kind: Generated<string>;
  reason: Generated<string>;
}

/** An account user's API token (new-api's token) on one developer key; times in seconds. */
export interface EdgeTokenTable {
  id: number;
  key_id: string;
  owner_id: number;
  name: string;
  /** The masked key every read shows. */
  key_hint: string;
  status: number;
  expired_time: number;
  remain_quota: number;
  unlimited_quota: number;
  model_limits_enabled: number;
  model_limits: string;
  allow_ips: string;
  group_name: string;
  used_quota: number;
  accessed_time: number;
  created_time: number;
  /** The full key sealed with the edge key until its one showing (then null), and until when it may be shown. */
  pending_key: string | null;
  pending_until: number | null;
  deleted_at: number | null;
}

/** A top-up code (new-api's redemption); only the SHA-256 of the code is kept. Times in seconds. */
export interface EdgeRedemptionTable {
  id: number;
  name: string;
  key_hash: string;
  key_hint: string;
  status: number;
  quota: number;
  created_time: number;
  redeemed_time: number;
  used_owner_id: number;
  expired_time: number;
  created_by: string;
  deleted_at: number | null;
}

/** A change of money, prices, keys or webhooks: who (`cli:<user>`, `staff:<name>`), what, names and counts (never a secret). */
export interface EdgeAuditTable {
  id: number;
  actor: string;
  operation: string;
  detail: string;
  created_at: number;
}

export interface EdgeDB {
  edge_meta: EdgeMetaTable;
  edge_owners: EdgeOwnerTable;
  edge_keys: EdgeKeyTable;
  edge_key_changes: EdgeKeyChangesTable;
  edge_wallets: EdgeWalletTable;
  edge_models: EdgeModelTable;
  edge_runs: EdgeRunTable;
  edge_idempotency: EdgeIdempotencyTable;
  edge_outbox: EdgeOutboxTable;
  edge_webhooks: EdgeWebhookTable;
  edge_deliveries: EdgeDeliveryTable;
  edge_delivery_attempts: EdgeDeliveryAttemptTable;
  edge_settlements: EdgeSettlementTable;
  edge_credits: EdgeCreditTable;
  edge_audit: EdgeAuditTable;
  edge_tokens: EdgeTokenTable;
  edge_redemptions: EdgeRedemptionTable;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
