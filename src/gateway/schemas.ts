import { Type } from '@sinclair/typebox';
import { RELAY_CALL_ERRORS } from '../contract/errors/relay.js';

/**
 * What the smaller gateway modules answer in `data`, and the catalog codes they throw (documentation and
 * the OpenAPI check; see `data` and `errors` in src/contract/types.ts). Channels, deployments, plugins and
 * the relay keep theirs in their own schemas.ts. Schemas with an `$id` are shared components.
 */

const Str = Type.String();
const Int = Type.Integer();
const Num = Type.Number();
const Bool = Type.Boolean();
const Strs = Type.Array(Str);

/** A background job started (G33, G35, G40); GS02 follows it. */
export const JobStarted = Type.Object({ task_id: Str, status: Str, type: Str }, { $id: 'JobStarted' });

/** A background job's state and progress (GS02; jobs/service.ts jobView). */
export const Job = Type.Object(
  {
    task_id: Str,
    type: Str,
    status: Type.Union([Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed')]),
    /** Counters of the job's work so far (total, done, failed…, by job type). */
    progress: Type.Record(Type.String(), Num),
    result: Type.Unknown(),
    error: Type.Union([Str, Type.Null()]),
    created_by: Str,
    created_at: Int,
    updated_at: Int,
    finished_at: Type.Union([Int, Type.Null()]),
  },
  { $id: 'Job' },
);

/** A channel named in another answer (plugins, ratio sync). */
export const ChannelRef = Type.Object({ id: Int, name: Str, type: Int, status: Int }, { $id: 'ChannelRef' });

/** GS01: a single-use staff proof for G10. */
export const StaffProof = Type.Object({ proof_token: Str, expires_at: Int });

/** G34: how one channel test went; 200 either way, `success` says how the upstream answered. */
const TestData = {
  channel_id: Int,
  model: Str,
  endpoint_type: Str,
  stream: Bool,
  key_index: Type.Union([Int, Type.Null()]),
  time: Num,
  response_time: Int,
};
export const ChannelTestAnswer = Type.Union([
  Type.Object({ success: Type.Literal(true), message: Str, time: Num, data: Type.Object(TestData) }),
  Type.Object({
    success: Type.Literal(false),
    message: Str,
    error_code: Str,
    time: Num,
    data: Type.Object({ ...TestData, upstream_status: Type.Union([Int, Type.Null()]) }),
  }),
]);

/** G07–G09: the coder upstream's own answer (JSON, else its text), scrubbed, with its status. */
export const CoderUsageAnswer = Type.Object({ success: Bool, message: Str, upstream_status: Int, data: Type.Unknown() });

/** G06: the refreshed credential's public facts. */
export const CoderKeyInfo = Type.Object({
  expires_at: Type.Union([Str, Type.Null()]),
  last_refresh: Type.Union([Str, Type.Null()]),
  account_id: Str,
  email: Type.Union([Str, Type.Null()]),
  channel_id: Int,
  channel_type: Int,
  channel_name: Str,
});

/** G36: the channel's balance (the reference also puts `balance` beside the envelope). */
export const BalanceAnswer = Type.Object({ balance: Num, currency: Str });

/** G60: the channel-affinity counters of one (rule, group, key fingerprint). */
export const AffinityUsage = Type.Object({
  rule_name: Str,
  using_group: Str,
  key_fp: Str,
  window_seconds: Int,
  hit: Int,
  total: Int,
  prompt_tokens: Int,
  completion_tokens: Int,
  total_tokens: Int,
  cached_tokens: Int,
  prompt_cache_hit_tokens: Int,
  last_seen_at: Int,
});

/** G62. */
export const AffinityStats = Type.Object({
  enabled: Bool,
  total: Int,
  unknown: Int,
  by_rule_name: Type.Record(Type.String(), Int),
  cache_capacity: Int,
  cache_algo: Str,
});

/** A prefill group (G78–G80). */
export const PrefillGroup = Type.Object(
  { id: Int, name: Str, type: Str, items: Strs, description: Str, created_time: Int, updated_time: Int },
  { $id: 'PrefillGroup' },
);

/** G82: sources a ratio sync can read (presets have negative ids). */
export const RatioSource = Type.Object({ id: Int, name: Str, base_url: Str, status: Int, type: Int });

const RatioValue = Type.Union([Num, Str]);
/** G83: where the sources' ratios differ from this gateway's, their per-call prices, and each source's outcome. */
export const RatioComparison = Type.Object({
  differences: Type.Record(
    Type.String(),
    Type.Record(
      Type.String(),
      Type.Object({ current: Type.Union([RatioValue, Type.Null()]), upstreams: Type.Record(Type.String(), RatioValue), confidence: Type.Record(Type.String(), Bool) }),
    ),
  ),
  prices: Type.Record(Type.String(), Type.Object({ current: Type.Record(Type.String(), RatioValue), upstreams: Type.Record(Type.String(), Type.Record(Type.String(), RatioValue)) })),
  test_results: Type.Array(Type.Object({ name: Str, status: Type.Union([Type.Literal('success'), Type.Literal('error')]), error: Type.Optional(Str) })),
});

/** G39: the staged model changes of one channel after a check. */
export const DetectResult = Type.Object({
  channel_id: Int,
  channel_name: Str,
  add_models: Strs,
  remove_models: Strs,
  last_check_time: Int,
  auto_added_models: Int,
});

/** G37: what one channel's apply changed. */
export const ApplyResult = Type.Object({
  id: Int,
  added_models: Strs,
  removed_models: Strs,
  ignored_models: Strs,
  remaining_models: Strs,
  remaining_remove_models: Strs,
  models: Str,
  settings: Str,
});

/** G38: one request's share of applying every staged change (`more`: call again with after_id = last_id). */
export const ApplyAllResult = Type.Object({
  count: Int,
  processed_channels: Int,
  added_models: Int,
  removed_models: Int,
  failed_channel_ids: Type.Array(Int),
  failures: Type.Array(Type.Object({ channel_id: Int, channel_name: Str, code: Str, message: Str })),
  results: Type.Array(
    Type.Object({ channel_id: Int, channel_name: Str, added_models: Strs, removed_models: Strs, remaining_models: Strs, remaining_remove_models: Strs }),
  ),
  more: Bool,
  last_id: Int,
});

/** Failures of a request to an upstream (src/contract/errors/upstream.ts). */
const UPSTREAM = [
  'UPSTREAM_ADDRESS_REFUSED',
  'UPSTREAM_URL_INVALID',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_BODY_TOO_LARGE',
  'UPSTREAM_UNREACHABLE',
  'UPSTREAM_BAD_STATUS',
  'UPSTREAM_BAD_RESPONSE',
  'UPSTREAM_NOT_SUPPORTED',
];
/** A channel's upstream target (its key unsealed, its type checked). */
const TARGET = ['CHANNEL_NOT_FOUND', 'CHANNEL_INVALID', 'CHANNEL_NO_AVAILABLE_KEY', 'CHANNEL_KEY_INDEX_OUT_OF_RANGE', 'GATEWAY_SEALING_KEY_CHANGED', ...UPSTREAM];

/** Catalog codes each smaller module's operations throw themselves. */
export const gatewayErrors = {
  staff: ['GATEWAY_SEALING_KEY_CHANGED', 'GW_VERIFY_SCOPE_INVALID', 'GW_VERIFY_CODE_INVALID', 'GW_VERIFY_NOT_ENROLLED', 'RATE_LIMITED'],
  jobs: ['JOB_NOT_FOUND'],
  jobStart: ['JOB_RUNNING'],
  channelTests: ['CHANNEL_TEST_ENDPOINT_UNSUPPORTED', 'JOB_RUNNING', ...TARGET],
  balance: ['CHANNEL_BALANCE_MULTI_KEY', 'JOB_RUNNING', ...TARGET],
  coder: ['CHANNEL_NOT_CODER', 'CHANNEL_CODER_MULTI_KEY', 'CHANNEL_CODER_NO_REFRESH_TOKEN', 'CHANNEL_KEY_CHANGED', 'IDEMPOTENCY_KEY_INVALID', ...TARGET],
  localModels: ['CHANNEL_NOT_OLLAMA', ...TARGET],
  models: TARGET,
  updates: ['JOB_RUNNING', ...TARGET],
  affinity: ['AFFINITY_CLEAR_TARGET_REQUIRED', 'AFFINITY_RULE_INVALID', 'AFFINITY_SETTINGS_INVALID'],
  ratioSync: ['CHANNEL_NOT_FOUND', 'RATIO_CONFIG_INVALID', 'RATIO_SYNC_NO_SOURCE', 'GATEWAY_SEALING_KEY_CHANGED'],
  prefill: ['PREFILL_GROUP_INVALID', 'PREFILL_GROUP_NAME_TAKEN', 'PREFILL_GROUP_NOT_FOUND'],
  upstream: UPSTREAM,
};

/** One relayed call as GS04 lists it (the relay log row, attempts parsed). */
export const RelayLogEntry = Type.Object({
  id: Int,
  created_at: Int,
  request_id: Str,
  caller: Str,
  /** The caller's name where the gateway knows it (an edge owner's when the edge runs in this process), else null. */
  caller_name: Type.Union([Str, Type.Null()]),
  caller_group: Str,
  format: Str,
  stream: Int,
  model: Str,
  upstream_model: Str,
  channel_id: Type.Union([Int, Type.Null()]),
  key_index: Type.Union([Int, Type.Null()]),
  status: Int,
  error_code: Type.Union([Str, Type.Null()]),
  prompt_tokens: Int,
  completion_tokens: Int,
  cached_tokens: Int,
  reasoning_tokens: Int,
  quota: Num,
  cost: Num,
  first_byte_ms: Type.Union([Int, Type.Null()]),
  total_ms: Int,
  retries: Int,
  attempts: Type.Array(Type.Object({ channel_id: Int, key_index: Type.Union([Int, Type.Null()]), status: Int, error_code: Type.Union([Str, Type.Null()]), ms: Int })),
  usage_counted: Int,
  error_detail: Type.Union([Str, Type.Null()]),
});

/** GS05: calls, tokens and cost per time bucket, by model, channel or caller. */
export const RelayUsage = Type.Object({
  bucket_seconds: Int,
  by: Type.Union([Type.Literal('model'), Type.Literal('channel'), Type.Literal('caller')]),
  buckets: Type.Array(Type.Object({ bucket: Int, key: Str, calls: Int, errors: Int, prompt_tokens: Int, completion_tokens: Int, quota: Num, avg_ms: Int })),
  /** By caller: the names of the callers the gateway knows (edge owners when the edge runs in this process), by key. */
  caller_names: Type.Record(Str, Str),
});

/** What the relay's call routes throw (an upstream's failure keeps the upstream's status). */
export const relayErrors = RELAY_CALL_ERRORS;
