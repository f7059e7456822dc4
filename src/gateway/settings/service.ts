import { AppError } from '../../kit/http/errors.js';
import { audited, type Actor } from '../audit/store.js';
import type { AffinityService } from '../affinity/service.js';
import { parseSettings } from '../affinity/settings.js';
import type { GatewayContext } from '../context.js';
import type { DeploymentService } from '../deployments/service.js';
import { readDeploymentSettings } from '../deployments/settings.js';
import { RATIO_FIELDS, type RatioField, type RatioValue } from '../ratio-sync/formats.js';
import type { RatioSyncService } from '../ratio-sync/service.js';

export type RatioConfigView = Record<RatioField, Record<string, RatioValue>> & { group_ratio: Record<string, number> };

/**
 * The settings staff change from the console (GS16–GS20), which were CLI-only: the gateway's own ratio
 * configuration, the io.net switch and key, and the channel-affinity settings. Each write is audited with
 * the staff member as actor (names and counts, never the API key) and reaches the relay of this process at
 * once.
 */
export class SettingsService {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly ratios: RatioSyncService,
    private readonly deployments: DeploymentService,
    private readonly affinity: AffinityService,
  ) {}

  /** GS16: every ratio map (empty when unset), in new-api's `/api/ratio_config` shape, and `group_ratio`. */
  async ratioConfig(): Promise<RatioConfigView> {
    const [current, groups] = await Promise.all([this.ratios.current(), this.ratios.groupRatios()]);
    const view = Object.fromEntries(RATIO_FIELDS.map((f) => [f, current[f] ?? {}])) as RatioConfigView;
    view.group_ratio = groups;
    return view;
  }

  /**
   * GS17 and the CLI's `ratio-config`: replaces the ratio maps (a map left out is emptied; `group_ratio`
   * left out stays), or with `merge` prices only the models given (every other price stays). Audited as
   * `operation`; answers the stored configuration and the prices it removed (`field model`).
   */
  async setRatioConfig(actor: Actor, body: unknown, opts: { operation?: string; merge?: boolean } = {}) {
    const given = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const sizes = Object.fromEntries(Object.entries(given).map(([f, m]) => [f.slice(0, 64), m && typeof m === 'object' ? Object.keys(m).length : null]));
    return audited(
      this.ctx.db,
      actor,
      opts.operation ?? 'GS17',
      null,
      { mode: opts.merge ? 'merge' : 'replace', fields: sizes },
      async () => {
        if (given !== body) throw new AppError('RATIO_CONFIG_INVALID');
        const before = await this.ratioConfig();
        await this.ratios.setCurrent(opts.merge ? mergedInto(before, given) : { ...Object.fromEntries(RATIO_FIELDS.map((f) => [f, {}])), ...given });
        const config = await this.ratioConfig();
        return { config, removed: removedPrices(before, config) };
      },
      (r) => ({ ok: true, removed: r.removed.length }),
    );
  }

  /** GS18: the io.net switch and/or key (sealed; an empty key removes it). Answers whether a key is set. */
  async setDeploymentSettings(actor: Actor, change: { enabled?: boolean; api_key?: string }) {
    const apiKey = change.api_key === undefined ? undefined : change.api_key.trim();
    const detail = { ...(change.enabled !== undefined ? { enabled: change.enabled } : {}), ...(apiKey !== undefined ? { api_key: apiKey ? 'set' : 'removed' } : {}) };
    return audited(this.ctx.db, actor, 'GS18', null, detail, async () => {
      if (change.enabled === undefined && apiKey === undefined) throw new AppError('DEPLOYMENT_SETTINGS_EMPTY');
      await this.deployments.setSettings({ enabled: change.enabled, apiKey });
      const s = await readDeploymentSettings(this.ctx);
      return { enabled: s.enabled, configured: !!s.apiKey };
    });
  }

  /** GS19: the stored channel-affinity settings with their defaults. */
  affinitySettings() {
    return this.affinity.settings();
  }

  /** GS20: validates (AFFINITY_SETTINGS_INVALID names the field) and stores the settings whole. */
  async setAffinitySettings(actor: Actor, body: unknown) {
    const rules = (body as { rules?: unknown })?.rules;
    return audited(this.ctx.db, actor, 'GS20', null, { rules: Array.isArray(rules) ? rules.length : 0 }, async () => {
      const settings = parseSettings(body);
      await this.affinity.saveSettings(settings);
      return settings;
    }, (s) => ({ ok: true, enabled: s.enabled, rule_names: s.rules.map((r) => r.name) }));
  }
}

/** The maps of `before` with the models of `given` set over them (a value that is no map is left to the check). */
function mergedInto(before: RatioConfigView, given: Record<string, unknown>) {
  const isMap = (m: unknown): m is Record<string, unknown> => !!m && typeof m === 'object' && !Array.isArray(m);
  const merged: Record<string, unknown> = { ...before };
  for (const [field, map] of Object.entries(given)) merged[field] = isMap(map) && isMap(merged[field]) ? { ...(merged[field] as object), ...map } : map;
  return merged;
}

/** The prices `before` had that `after` has not, as `field model`. */
function removedPrices(before: RatioConfigView, after: RatioConfigView): string[] {
  return Object.entries(before).flatMap(([field, map]) => Object.keys(map).filter((model) => !(model in ((after as Record<string, object>)[field] ?? {}))).map((model) => `${field} ${model}`));
}
