import type { Generated } from 'kysely';
/** Table types of the gateway database (its own database; nothing else reads or writes it). */
export interface GatewayMetaTable {
  key: string;
  value: string;
}

/** Staff members (role root|admin) and service identities (role service). */
export interface StaffTable {
  id: number;
  name: string;
  kind: 'staff' | 'service';
  role: 'root' | 'admin' | 'service';
  /** Sealed TOTP secret (AES-256-GCM), null until enrolled. */
  totp_secret: string | null;
  /** Last accepted TOTP time step, so one code is never accepted twice. */
  totp_last_step: number;
  created_at: number;
  /** Set by `staff disable`: its tokens stop working and it gets no new ones; null while enabled. */
  disabled_at: number | null;
}

/** Per-identity grant or denial of one permission; a denial wins over the role and a grant. */
export interface StaffPermissionTable {
  staff_id: number;
  permission: string;
  effect: 'grant' | 'deny';
}

export interface StaffTokenTable {
  id: number;
  staff_id: number;
  /** SHA-256 of the bearer token; the token itself is shown once and never stored. */
  token_hash: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

/** Single-use security proofs issued by POST /api/staff/verify. */
export interface SecurityProofTable {
  token_hash: string;
  staff_id: number;
  scope: string;
  channel_id: number;
  expires_at: number;
  used_at: number | null;
}

export interface ChannelTable {
  id: number;
  type: number;
  /** Sealed key text (AES-256-GCM); never selected into a response. */
  key: string;
  openai_organization: string | null;
  test_model: string | null;
  status: number;
  name: string;
  weight: number;
  created_time: number;
  test_time: number;
  response_time: number;
  base_url: string;
  other: string;
  balance: number;
  balance_updated_time: number;
  models: string;
  group: string;
  used_quota: number;
  model_mapping: string | null;
  status_code_mapping: string | null;
  priority: number;
  auto_ban: number;
  other_info: string;
  tag: string | null;
  setting: string | null;
  param_override: string | null;
  header_override: string | null;
  remark: string | null;
  channel_info: string;
  settings: string;
}

export interface AbilityTable {
  group: string;
  model: string;
  channel_id: number;
  enabled: number;
  priority: number;
  weight: number;
  tag: string | null;
}

export interface AuditTable {
  id: number;
  actor_id: number;
  actor_name: string;
  operation: string;
  channel_id: number | null;
  /** JSON detail (names, counts, changed field names); never key values. */
  detail: string;
  created_at: number;
}

export interface IdempotencyTable {
  actor_id: number;
  operation: string;
  key: string;
  body_hash: string;
  response: string | null;
  created_at: number;
}

export interface PrefillGroupTable {
  id: number;
  name: string;
  type: string;
  items: string;
  description: string;
  created_time: number;
  updated_time: number;
  deleted_at: number | null;
}

/** A background job (G33, G40): one active job per type across instances; its runner renews a lease. */
export interface JobTable {
  id: string;
  type: string;
  status: 'running' | 'succeeded' | 'failed';
  /** 1 while running, null after (the unique index on (type, active) of migration 0012). */
  active: number | null;
  params: string;
  progress: string;
  result: string | null;
  error: string | null;
  created_by: number;
  created_by_name: string;
  /** The instance running it. */
  runner: string;
  /** Until when the runner holds the job (seconds); an expired lease means the runner is gone. */
  lease_until: number;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

/** Enable/disable state of one task plugin key; without a row the layer's default applies. */
export interface TaskPluginTable {
  key: string;
  enabled: number;
  updated_at: number;
}

export type PluginTaskStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** One task created through a task plugin's route, owned by the identity that created it. */
export interface TaskPluginTaskTable {
  id: number;
  /** Public id (random, not guessable). */
  task_id: string;
  plugin_key: string;
  plugin_version: string;
  owner_id: number;
  owner_name: string;
  status: PluginTaskStatus;
  /** JSON of the validated request fields. */
  input: string;
  result: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

/** One relay call (src/gateway/relay/log-store.ts). Times in milliseconds since the epoch. */
export interface RelayLogTable {
  id: Generated<number>;
  created_at: number;
  request_id: string;
  caller: string;
  caller_group: string;
  format: string;
  stream: number;
  model: string;
  upstream_model: string;
  channel_id: number | null;
  key_index: number | null;
  status: number;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  quota: number;
  cost: number;
  first_byte_ms: number | null;
  total_ms: number;
  retries: number;
  attempts: string;
  /** 1 when the usage was counted with the tokenizer rather than reported by the upstream. */
  usage_counted: number;
  /** What went wrong, for staff (the caller's message says less). */
  error_detail: string | null;
}

export interface GatewayDB {
  gateway_meta: GatewayMetaTable;
  staff: StaffTable;
  staff_permissions: StaffPermissionTable;
  staff_tokens: StaffTokenTable;
  security_proofs: SecurityProofTable;
  channels: ChannelTable;
  abilities: AbilityTable;
  gateway_audit: AuditTable;
  idempotency_keys: IdempotencyTable;
  prefill_groups: PrefillGroupTable;
  gateway_jobs: JobTable;
  task_plugins: TaskPluginTable;
  task_plugin_tasks: TaskPluginTaskTable;
  relay_log: RelayLogTable;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
