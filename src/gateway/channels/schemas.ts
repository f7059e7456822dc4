import { Type } from '@sinclair/typebox';

const NullableString = (max = 65536) => Type.Union([Type.String({ maxLength: max }), Type.Null()]);
const Int = (opts: { minimum?: number; maximum?: number } = {}) =>
  Type.Integer({ minimum: opts.minimum ?? -1_000_000_000, maximum: opts.maximum ?? 1_000_000_000 });

/** The channel write fields (unknown fields are ignored; server-managed ones are accepted and ignored). */
export const ChannelFields = {
  type: Type.Optional(Type.Union([Int({ minimum: 0, maximum: 1000 }), Type.Null()])),
  key: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  openai_organization: Type.Optional(NullableString(255)),
  test_model: Type.Optional(NullableString(255)),
  status: Type.Optional(Int({ minimum: 0, maximum: 3 })),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  weight: Type.Optional(Int({ minimum: 0 })),
  base_url: Type.Optional(NullableString(2048)),
  other: Type.Optional(NullableString()),
  models: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  group: Type.Optional(Type.String({ maxLength: 4096 })),
  model_mapping: Type.Optional(NullableString()),
  status_code_mapping: Type.Optional(NullableString(1024)),
  priority: Type.Optional(Int()),
  auto_ban: Type.Optional(Int({ minimum: 0, maximum: 1 })),
  other_info: Type.Optional(NullableString()),
  tag: Type.Optional(NullableString(255)),
  setting: Type.Optional(NullableString()),
  param_override: Type.Optional(NullableString()),
  header_override: Type.Optional(NullableString()),
  remark: Type.Optional(NullableString(255)),
  settings: Type.Optional(NullableString()),
  created_time: Type.Optional(Type.Unknown()),
  test_time: Type.Optional(Type.Unknown()),
  response_time: Type.Optional(Type.Unknown()),
  balance: Type.Optional(Type.Unknown()),
  balance_updated_time: Type.Optional(Type.Unknown()),
  used_quota: Type.Optional(Type.Unknown()),
  channel_info: Type.Optional(Type.Unknown()),
};

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) });
export const Ids = Type.Array(Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }), { maxItems: 10000 });

export const ListQuery = Type.Object({
  p: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000_000 })),
  page_size: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
  ps: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
  size: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
  id_sort: Type.Optional(Type.Boolean()),
  tag_mode: Type.Optional(Type.Boolean()),
  status: Type.Optional(Type.String({ maxLength: 32 })),
  type: Type.Optional(Type.Integer({ minimum: -1, maximum: 1000 })),
  sort_by: Type.Optional(Type.String({ maxLength: 32 })),
  sort_order: Type.Optional(Type.String({ maxLength: 8 })),
  group: Type.Optional(Type.String({ maxLength: 64 })),
  keyword: Type.Optional(Type.String({ maxLength: 255 })),
  model: Type.Optional(Type.String({ maxLength: 255 })),
});

/*
 * What the channel operations answer in `data` (documentation and the OpenAPI check; see `data` in
 * src/contract/types.ts). Schemas with an `$id` are shared components of the document.
 */
const Str = Type.String();
const Whole = Type.Integer();
const NullStr = Type.Union([Type.String(), Type.Null()]);

/** channel_info as answers show it: no per-key disabled reasons or times (service.ts publicInfo). */
export const ChannelInfoView = Type.Object(
  {
    is_multi_key: Type.Boolean(),
    // As stored: an imported value that is not a number is shown as it is.
    multi_key_size: Type.Union([Type.Number(), Type.String()]),
    multi_key_status_list: Type.Record(Type.String(), Type.Integer()),
    multi_key_polling_index: Type.Number(),
    multi_key_mode: Str,
  },
  { $id: 'ChannelInfo' },
);

/** A channel as answers show it: every column, the key always "" (service.ts view). */
export const ChannelView = Type.Object(
  {
    id: Whole,
    type: Whole,
    key: Type.Literal(''),
    openai_organization: NullStr,
    test_model: NullStr,
    status: Whole,
    name: Str,
    weight: Whole,
    created_time: Whole,
    test_time: Whole,
    response_time: Whole,
    base_url: Str,
    other: Str,
    // null where the stored value is not finite.
    balance: Type.Union([Type.Number(), Type.Null()]),
    balance_updated_time: Whole,
    models: Str,
    group: Str,
    used_quota: Type.Number(),
    model_mapping: NullStr,
    status_code_mapping: NullStr,
    priority: Whole,
    auto_ban: Whole,
    other_info: Str,
    tag: NullStr,
    setting: NullStr,
    param_override: NullStr,
    header_override: NullStr,
    remark: NullStr,
    channel_info: ChannelInfoView,
    settings: Str,
  },
  { $id: 'Channel' },
);

/** One page of channels (G01, G27). */
export const ChannelPage = Type.Object(
  { items: Type.Array(ChannelView), total: Whole, page: Whole, page_size: Whole, type_counts: Type.Record(Type.String(), Whole) },
  { $id: 'ChannelPage' },
);

/** A key of a multi-key channel as G21's get_key_status lists it. */
const KeyState = Type.Object({ index: Whole, status: Whole, key_preview: Str, disabled_time: Type.Optional(Whole), reason: Type.Optional(Str) });

/** G21: the key states of a multi-key channel (get_key_status), or what an action changed. */
export const MultiKeyAnswer = Type.Union([
  Type.Object({
    keys: Type.Array(KeyState),
    total: Whole,
    page: Whole,
    page_size: Whole,
    total_pages: Whole,
    enabled_count: Whole,
    manual_disabled_count: Whole,
    auto_disabled_count: Whole,
  }),
  Type.Object({ action: Str, id: Whole, count: Whole, multi_key_size: Whole }),
]);

/** Catalog codes the channel operations throw themselves (one list for the module). */
export const channelErrors = [
  'CHANNEL_NOT_FOUND',
  'CHANNEL_INVALID',
  'CHANNEL_IDS_REQUIRED',
  'CHANNEL_MODE_UNSUPPORTED',
  'CHANNEL_STATUS_INVALID',
  'CHANNEL_TAG_REQUIRED',
  'CHANNEL_FIX_RUNNING',
  'CHANNEL_ACTION_UNSUPPORTED',
  'CHANNEL_NOT_MULTI_KEY',
  'CHANNEL_KEY_INDEX_OUT_OF_RANGE',
  'CHANNEL_LAST_KEY',
  'CHANNEL_NO_KEY_TO_DISABLE',
  'CHANNEL_NO_DISABLED_KEY',
  'GATEWAY_SEALING_KEY_CHANGED',
  'IDEMPOTENCY_KEY_INVALID',
  'IDEMPOTENCY_KEY_REUSED',
  // A write still deadlocked after its retries, or a lock wait that timed out (transactionWithRetry).
  'SERVICE_UNAVAILABLE',
];
