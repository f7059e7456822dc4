import { Type } from '@sinclair/typebox';
import { ChannelRef } from '../schemas.js';

/**
 * What the task plugin operations (G72–G77, G84, GS03 and the plugins' own routes) answer in `data`,
 * and the catalog codes they throw. Documentation and the OpenAPI check only.
 */

const Str = Type.String();
const Int = Type.Integer();
const Bool = Type.Boolean();
const Free = Type.Record(Type.String(), Type.Unknown());

export const MarketplaceSource = Type.Object({ name: Str, index_url: Str }, { $id: 'MarketplaceSource' });

/** A task a plugin created (tasks.ts taskView, with its owner). */
export const PluginTask = Type.Object(
  {
    task_id: Str,
    plugin: Str,
    version: Str,
    status: Type.Union(['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((s) => Type.Literal(s))),
    input: Type.Unknown(),
    result: Type.Unknown(),
    error: Type.Union([Str, Type.Null()]),
    created_at: Int,
    updated_at: Int,
    owner: Str,
  },
  { $id: 'PluginTask' },
);

const NullStr = Type.Union([Str, Type.Null()]);

export const answers = {
  G72: Type.Object({ key: Str, plugin_enabled: Bool, channels: Type.Array(ChannelRef), disabled_channels: Int, in_flight_count: Int }),
  G73: Type.Array(
    Type.Object({
      key: Str,
      version: Str,
      layer: Type.Union([Type.Literal('factory'), Type.Literal('installed')]),
      name: Str,
      api_version: Int,
      running: Bool,
      active: Bool,
      route_count: Int,
      has_icon: Bool,
      task_count: Int,
      in_flight_count: Int,
    }),
  ),
  G74: Type.Object({ key: Str, version: Str, deleted: Bool, channels: Type.Array(ChannelRef), in_flight_count: Int, failed_tasks: Int, restart_required: Bool }),
  G75: Type.Array(MarketplaceSource),
  G76: Type.Array(MarketplaceSource),
  G77: Type.Object({
    current_generation: Int,
    generation_published_at: Int,
    database_revision: Str,
    database_error: Type.Optional(Str),
    last_rebuild: Type.Object({ status: Str, attempted_at: Int, generation: Int, error: Type.Optional(Str), plugin_error_count: Int }),
    plugin_errors: Type.Record(Type.String(), Str),
    restart_required: Bool,
    pending: Type.Array(Type.Object({ key: Str, running_version: NullStr, installed_version: NullStr })),
    plugins: Type.Array(
      Type.Object({ key: Str, version: Str, layer: Str, enabled: Bool, runtime_status: Str, route_count: Int, channel_count: Int, in_flight_count: Int }),
    ),
    plugin_dir: Str,
    factory_dir: NullStr,
  }),
  G84: Type.Array(
    Type.Object({
      key: Str,
      name: Str,
      description: Str,
      website: Str,
      baseUrl: Str,
      icon: Str,
      hasIcon: Bool,
      models: Type.Array(Str),
      channelTypes: Type.Array(Int),
      sortPriority: Int,
      upstreams: Type.Array(Str),
      usageProfiles: Type.Array(Free),
      usageSchema: Free,
    }),
  ),
  GS03: Type.Object({ items: Type.Array(PluginTask), total: Int, page: Int, page_size: Int }),
  /** A plugin route without a task: whatever the plugin answers. */
  route: Type.Unknown(),
  /** A task route (create, read, cancel): the plugin's own fields, then the task's (tasks.ts envelopeOf). */
  taskRoute: Type.Object({ task_id: Str, plugin: Str, version: Str, status: Str }, { additionalProperties: true }),
};

/** Catalog codes the plugin operations and the plugins' routes throw. */
export const pluginErrors = [
  'TASK_PLUGIN_NOT_FOUND',
  'TASK_PLUGIN_DISABLED',
  'TASK_PLUGIN_IN_USE',
  'TASK_PLUGIN_REJECTED',
  'TASK_PLUGIN_FAILED',
  'TASK_PLUGIN_BUDGET_EXCEEDED',
  'TASK_PLUGIN_SOURCES_INVALID',
  'TASK_PLUGIN_TASK_FINISHED',
  'TASK_PLUGIN_TASK_NOT_FOUND',
  'TASK_PLUGIN_VERSION_FACTORY',
  'TASK_PLUGIN_VERSION_IN_USE',
  'TASK_PLUGIN_VERSION_NOT_FOUND',
];
