/**
 * The edge's administration port: how the gateway's staff console manages the edge (public models, keys,
 * wallets, usage, webhooks) when both run in one process. The edge implements it (src/edge/admin/), main.ts
 * hands it to the gateway; `gateway/` and `edge/` share only these types. Money is in the edge's integer
 * wallet units, which are the gateway's quota units: 500,000 units = 1 USD.
 */

/** An owner name: the edge's own identities (keys, wallet and webhooks belong to one). */
export const EDGE_OWNER_PATTERN = '^[A-Za-z0-9._-]{1,64}$';
/** A public model id clients ask for. */
export const EDGE_MODEL_ID_PATTERN = '^[A-Za-z0-9._:/-]{1,128}$';
/** A gateway channel group. */
export const EDGE_GROUP_PATTERN = '^[\\w.-]{1,64}$';
/** The model name the gateway relay serves a public model as. */
export const EDGE_GATEWAY_MODEL_PATTERN = '^\\S{1,255}$';

export interface EdgeModelSettings {
  /** Units one call reserves until it is settled. */
  reserve_amount: number;
  /** null: the public id. */
  gateway_model: string | null;
  group: string;
  /** Units a call may cost beyond its reservation, from the available balance. */
  overdraft: number;
  enabled: boolean;
}

export interface EdgeModel extends EdgeModelSettings {
  public_model_id: string;
  /** Seconds since the epoch. */
  updated_at: number;
}

/** A developer key as listed: never its secret. */
export interface EdgeKey {
  key_id: string;
  owner: string;
  created_at: number;
  revoked_at: number | null;
}

/** A key just issued: `key` (svc_sk_…) is shown this once and never stored. */
export interface EdgeIssuedKey {
  key_id: string;
  owner: string;
  key: string;
}

export interface EdgeWallet {
  owner: string;
  wallet_id: string;
  balance: number;
  reserved: number;
  /** balance - reserved. */
  available: number;
  settled_runs: number;
  settled_reserved: number;
  settled_charged: number;
  updated_at: number;
}

/** An owner's ended calls of one UTC day and public model. */
export interface EdgeUsageLine {
  day: string;
  model: string;
  calls: number;
  failed: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
}

export interface EdgeWebhook {
  endpoint_id: string;
  owner: string;
  url: string;
  created_at: number;
  removed_at: number | null;
}

/** An endpoint just added: `secret` (its signing secret) is shown this once. */
export interface EdgeWebhookAdded {
  endpoint_id: string;
  owner: string;
  url: string;
  secret: string;
}

export interface EdgeStatus {
  admission_mode: string;
  relay_configured: boolean;
}

/** A request the edge refuses: `invalid` (bad value, with a detail), `not_found`, or `conflict` (a credit id used for another credit). */
export class EdgeAdminRefusal extends Error {
  constructor(
    readonly reason: 'invalid' | 'not_found' | 'conflict',
    readonly detail: string,
  ) {
    super(detail);
  }
}

/**
 * Who asks for a change, as the edge's own audit log (edge_audit) names them: `staff:<name>` from the
 * gateway console, `cli:<user>` from the CLI. Every change of money, prices, keys and webhooks is recorded
 * there in the change's transaction, whatever the entry point.
 */
export type EdgeActor = string;

export interface EdgeAdminPort {
  status(): EdgeStatus;
  listModels(): Promise<EdgeModel[]>;
  setModel(publicModelId: string, settings: EdgeModelSettings, by: EdgeActor): Promise<EdgeModel>;
  listKeys(owner?: string): Promise<EdgeKey[]>;
  issueKey(owner: string, by: EdgeActor): Promise<EdgeIssuedKey>;
  /** false: no active key of that id. */
  revokeKey(keyId: string, by: EdgeActor): Promise<boolean>;
  listWallets(): Promise<EdgeWallet[]>;
  /** undefined: the owner has no wallet. */
  wallet(owner: string): Promise<EdgeWallet | undefined>;
  /**
   * Adds units (creating the owner and its wallet when new); the wallet after the change. With a `creditId`
   * the credit happens once: a retry answers the first credit's wallet and adds nothing (the id recorded in
   * the credit's own transaction); the id with another owner or amount is refused (`conflict`).
   */
  credit(owner: string, amount: number, by: EdgeActor, creditId?: string): Promise<EdgeWallet>;
  /** null: no such owner. */
  usage(owner: string, days: number): Promise<EdgeUsageLine[] | null>;
  listWebhooks(): Promise<EdgeWebhook[]>;
  addWebhook(owner: string, url: string, by: EdgeActor): Promise<EdgeWebhookAdded>;
  /** false: no active endpoint of that id. */
  removeWebhook(endpointId: string, by: EdgeActor): Promise<boolean>;
  /** Queues past events again to their owners' current endpoints (one event, or every event from a sequence on). */
  replay(where: { eventId?: string; sinceSequence?: number }): Promise<{ events: number; queued: number }>;
  /** The names of the owners of these ids (the relay caller `edge:owner-<id>`); an unknown id is left out. */
  ownerNames(ids: number[]): Promise<Map<number, string>>;
}

/** The owner id in a relay caller of the edge (`edge:owner-<id>`), else null. */
export function edgeOwnerIdOf(caller: string): number | null {
  const m = /^edge:owner-(\d{1,15})$/.exec(caller);
  return m ? Number(m[1]) : null;
}

/** The port as the gateway holds it: filled once the edge is built in this process, null when it is not served here. */
export interface EdgeAdminHolder {
  port: EdgeAdminPort | null;
}
