import { Type } from '@sinclair/typebox';
import { RATIO_FIELDS } from '../ratio-sync/formats.js';

const Str = Type.String();
const Bool = Type.Boolean();
const Int = Type.Integer();
const Strs = Type.Array(Str);

/** GS16 / GS17: new-api's `/api/ratio_config` maps (model → value), every one present, and `group_ratio`. */
export const RatioConfig = Type.Object(
  {
    ...Object.fromEntries(RATIO_FIELDS.map((f) => [f, Type.Record(Type.String(), Type.Union([Type.Number(), Type.String()]))])),
    group_ratio: Type.Record(Type.String(), Type.Number()),
  },
  { $id: 'RatioConfig' },
);

/**
 * GS17's body: any of the maps. The service checks each (the failures name the field), so the schema only
 * asks for an object here: a schema failure would name the field with a generic code.
 */
export const RatioConfigBody = Type.Object(
  {
    ...Object.fromEntries(
      [...RATIO_FIELDS, 'group_ratio'].map((f) => [f, Type.Optional(Type.Unknown({ description: f === 'group_ratio' ? 'group → multiplier ≥ 0; left out: the stored one stays' : 'model → number ≥ 0 (billing_mode, billing_expr: text); left out: emptied' }))]),
    ),
  },
  { additionalProperties: true },
);

/** GS18's answer: the switch and whether a key is stored (never the key). */
export const DeploymentSettingsState = Type.Object({ enabled: Bool, configured: Bool });

const KeySource = Type.Object({
  type: Type.Union([Type.Literal('context_int'), Type.Literal('context_string'), Type.Literal('request_header'), Type.Literal('gjson')]),
  key: Type.Optional(Str),
  path: Type.Optional(Str),
});

/** GS19 / GS20: the channel-affinity settings (`channel_affinity_setting`), defaults filled in. */
export const AffinitySettings = Type.Object(
  {
    enabled: Bool,
    switch_on_success: Bool,
    keep_on_channel_disabled: Bool,
    max_entries: Int,
    default_ttl_seconds: Int,
    rules: Type.Array(
      Type.Object({
        name: Str,
        model_regex: Strs,
        path_regex: Strs,
        user_agent_include: Strs,
        key_sources: Type.Array(KeySource),
        value_regex: Str,
        ttl_seconds: Int,
        skip_retry_on_failure: Bool,
        include_using_group: Bool,
        include_model_name: Bool,
        include_rule_name: Bool,
      }),
    ),
  },
  { $id: 'AffinitySettings' },
);

/** GS20's body: checked by the affinity settings parser (AFFINITY_SETTINGS_INVALID names the field). */
export const AffinitySettingsBody = Type.Object(
  {
    enabled: Type.Optional(Type.Unknown()),
    switch_on_success: Type.Optional(Type.Unknown()),
    keep_on_channel_disabled: Type.Optional(Type.Unknown()),
    max_entries: Type.Optional(Type.Unknown()),
    default_ttl_seconds: Type.Optional(Type.Unknown()),
    rules: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

export const settingsErrors = {
  ratio: ['RATIO_CONFIG_INVALID', 'RATIO_CONFIG_FIELD_UNKNOWN', 'RATIO_CONFIG_FIELD_INVALID', 'RATIO_CONFIG_MODEL_INVALID', 'RATIO_CONFIG_VALUE_INVALID', 'RATIO_CONFIG_TOO_LARGE'],
  deployment: ['DEPLOYMENT_SETTINGS_EMPTY', 'GATEWAY_SEALING_KEY_CHANGED'],
  affinity: ['AFFINITY_SETTINGS_INVALID'],
};
