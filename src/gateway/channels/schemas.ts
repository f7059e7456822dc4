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
