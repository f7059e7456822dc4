import fs from 'node:fs';
import path from 'node:path';
import type { RegisteredOperation } from '../../contract/registry.js';
import { AppError } from '../../kit/http/errors.js';
import { audit, type Actor } from '../audit/store.js';
import type { ChannelService } from '../channels/service.js';
import { STATUS } from '../channels/types.js';
import type { GatewayContext } from '../context.js';
import { nowSeconds } from '../db.js';
import { activePackages, FACTORY_DIR, importEntry, scanPlugins, compareVersions, type PluginPackage } from './loader.js';
import { ManifestError } from './manifest.js';
import { defaultEnabled, pluginOperations } from './runtime.js';
import { checkSources, type MarketplaceSource } from './sources.js';
import * as store from './store.js';
import { TaskRunner, taskView } from './tasks.js';

type RebuildStatus = 'never' | 'success' | 'partial' | 'failed';

/**
 * Task plugins: loads the running versions at start (Fastify cannot add routes after listen, so an
 * installed, deleted or newer version takes effect at the next start), keeps their enabled state in the
 * database (shared by every instance), and answers the administration operations G72–G77 and G84.
 */
export class PluginService {
  readonly runner: TaskRunner;
  private running = new Map<string, PluginPackage>();
  /** Per key, the version chosen at start (loaded or not): what a restart would change is measured from it. */
  private chosen = new Map<string, string>();
  private errors: Record<string, string> = {};
  private rebuild: { status: RebuildStatus; attempted_at: number; generation: number; error?: string } = { status: 'never', attempted_at: 0, generation: 0 };

  constructor(
    private readonly ctx: GatewayContext,
    private readonly channels: ChannelService,
  ) {
    this.runner = new TaskRunner(ctx);
  }

  private dirs() {
    return { factory: this.ctx.config.gateway.pluginFactory ? FACTORY_DIR : null, installed: this.ctx.config.gateway.pluginDir };
  }

  /** Scans both layers and imports the entry of each key's running version; broken ones are reported. */
  async load() {
    const attempted = nowSeconds();
    try {
      const scan = scanPlugins(this.dirs());
      this.errors = { ...scan.errors };
      this.running = new Map();
      const active = activePackages(scan.packages);
      this.chosen = new Map([...active].map(([key, pkg]) => [key, pkg.manifest.version]));
      for (const pkg of active.values()) {
        const label = `${pkg.manifest.key}@${pkg.manifest.version}`;
        try {
          await importEntry(pkg);
          this.running.set(pkg.manifest.key, pkg);
        } catch (e) {
          this.errors[label] = e instanceof ManifestError ? e.message : `the entry module failed to load (${(e as Error)?.name ?? 'error'})`;
        }
      }
      for (const [label, error] of Object.entries(this.errors)) this.ctx.log.error({ plugin: label, error }, 'task plugin not loaded');
      const status = Object.keys(this.errors).length ? 'partial' : 'success';
      this.rebuild = { status, attempted_at: attempted, generation: 1 };
    } catch (e) {
      this.rebuild = { status: 'failed', attempted_at: attempted, generation: 0, error: (e as NodeJS.ErrnoException).code ?? 'scan failed' };
      throw e;
    }
  }

  close() {
    this.runner.close();
  }

  /** The routes of the running plugins, as registry operations with their handlers. */
  operations(): RegisteredOperation[] {
    return pluginOperations(this.running.values(), defaultEnabled, this.runner);
  }

  /** The operations with each plugin route's state as the database has it now. */
  async withState(ops: RegisteredOperation[]): Promise<RegisteredOperation[]> {
    const rows = await store.enabledRows(this.ctx.db);
    return ops.map((op) => {
      const key = op.spec.plugin?.key;
      const pkg = key ? this.running.get(key) : undefined;
      if (!key || !pkg) return op;
      return { ...op, state: (rows.get(key) ?? defaultEnabled(pkg)) ? 'implemented' : 'disabled' };
    });
  }

  /** The package that runs (or would run after a restart) for a key; 404 when none is installed. */
  private known(key: string) {
    const scan = scanPlugins(this.dirs());
    const pkg = this.running.get(key) ?? activePackages(scan.packages).get(key);
    if (!pkg) throw new AppError('TASK_PLUGIN_NOT_FOUND', { params: { key } });
    return { pkg, scan };
  }

  private async enabled(pkg: PluginPackage) {
    return (await store.enabledRow(this.ctx.db, pkg.manifest.key)) ?? defaultEnabled(pkg);
  }

  /** G72: disabling needs cascade when channels are bound (they are disabled too) and force with tasks in flight. */
  async setStatus(actor: Actor, key: string, enable: boolean, cascade: boolean, force: boolean) {
    const { pkg } = this.known(key);
    const channels = await store.boundChannels(this.ctx.db, key);
    const inFlight = await store.inFlightCount(this.ctx.db, key);
    let disabled = 0;
    if (!enable) {
      if ((channels.length && !cascade) || (inFlight && !force)) {
        throw new AppError('TASK_PLUGIN_IN_USE', {
          params: { key, channel_count: channels.length, in_flight_count: inFlight },
          data: { plugin_enabled: await this.enabled(pkg), channels, disabled_channels: 0, in_flight_count: inFlight },
        });
      }
      const toDisable = channels.filter((c) => c.status === STATUS.enabled).map((c) => c.id);
      if (cascade && toDisable.length) disabled = await this.channels.setStatus(actor, 'G72', toDisable, STATUS.manual, { task_plugin_key: key });
    }
    await this.ctx.db.transaction().execute(async (trx) => {
      await store.setEnabledRow(trx, key, enable);
      await audit(trx, actor, 'G72', null, { task_plugin_key: key, enabled: enable, cascade, force, disabled_channels: disabled, in_flight_count: inFlight });
    });
    const after = disabled ? await store.boundChannels(this.ctx.db, key) : channels;
    return { key, plugin_enabled: enable, channels: after, disabled_channels: disabled, in_flight_count: inFlight };
  }

  /** G73: every installed version of a key, newest first. */
  async versions(key: string) {
    const { scan } = this.known(key);
    const next = activePackages(scan.packages).get(key);
    const counts = await store.versionTaskCounts(this.ctx.db, key);
    const running = this.running.get(key);
    return scan.packages
      .filter((p) => p.manifest.key === key)
      .sort((a, b) => compareVersions(b.manifest.version, a.manifest.version) || (a.layer === 'installed' ? -1 : 1))
      .map((p) => ({
        key,
        version: p.manifest.version,
        layer: p.layer,
        name: p.manifest.name,
        api_version: p.manifest.apiVersion,
        running: running?.manifest.version === p.manifest.version && running.layer === p.layer,
        active: next === p,
        route_count: p.manifest.routes.length,
        has_icon: p.hasIcon,
        task_count: counts.get(p.manifest.version)?.tasks ?? 0,
        in_flight_count: counts.get(p.manifest.version)?.in_flight ?? 0,
      }));
  }

  /** G74: deletes an installed version folder; with force its in-flight tasks are failed. */
  async deleteVersion(actor: Actor, key: string, version: string, force: boolean) {
    const { scan } = this.known(key);
    const copies = scan.packages.filter((p) => p.manifest.key === key && p.manifest.version === version);
    const installed = copies.find((p) => p.layer === 'installed');
    if (!installed) {
      if (copies.length) throw new AppError('TASK_PLUGIN_VERSION_FACTORY', { params: { key, version } });
      throw new AppError('TASK_PLUGIN_VERSION_NOT_FOUND', { params: { key, version } });
    }
    const serving = this.running.get(key)?.manifest.version === version || activePackages(scan.packages).get(key) === installed;
    const channels = serving ? await store.boundChannels(this.ctx.db, key) : [];
    const inFlight = await store.inFlightCount(this.ctx.db, key, version);
    if ((channels.length || inFlight) && !force) {
      throw new AppError('TASK_PLUGIN_VERSION_IN_USE', {
        params: { key, version, channel_count: channels.length, in_flight_count: inFlight },
        data: { channels, in_flight_count: inFlight },
      });
    }
    const root = fs.realpathSync(this.ctx.config.gateway.pluginDir);
    const dir = fs.realpathSync(installed.dir);
    if (!dir.startsWith(root + path.sep)) throw new AppError('TASK_PLUGIN_VERSION_NOT_FOUND', { params: { key, version } });
    const failed = inFlight ? await store.failInFlight(this.ctx.db, key, version, 'the plugin version was deleted') : 0;
    fs.rmSync(dir, { recursive: true, force: true });
    await audit(this.ctx.db, actor, 'G74', null, { task_plugin_key: key, version, force, channels: channels.length, in_flight_count: inFlight, failed_tasks: failed });
    return { key, version, deleted: true, channels, in_flight_count: inFlight, failed_tasks: failed, restart_required: (await this.pending()).length > 0 };
  }

  async sources(): Promise<MarketplaceSource[]> {
    const text = await store.readOption(this.ctx.db, store.SOURCES_OPTION);
    if (!text) return [];
    try {
      const list = JSON.parse(text);
      return Array.isArray(list) ? list : [];
    } catch {
      return [];
    }
  }

  async setSources(actor: Actor, input: MarketplaceSource[]) {
    const list = checkSources(input);
    await this.ctx.db.transaction().execute(async (trx) => {
      await store.writeOption(trx, store.SOURCES_OPTION, JSON.stringify(list));
      await audit(trx, actor, 'G76', null, { count: list.length, names: list.map((s) => s.name) });
    });
    return list;
  }

  /** Keys whose version on disk differs from the one chosen at start (applied at the next start). */
  private async pending() {
    const next = activePackages(scanPlugins(this.dirs()).packages);
    const keys = [...new Set([...this.chosen.keys(), ...next.keys()])].sort();
    return keys
      .filter((key) => (this.chosen.get(key) ?? null) !== (next.get(key)?.manifest.version ?? null))
      .map((key) => ({ key, running_version: this.running.get(key)?.manifest.version ?? null, installed_version: next.get(key)?.manifest.version ?? null }));
  }

  /** G77. */
  async runtimeStatus() {
    let revision = '';
    let databaseError: string | undefined;
    let rows = new Map<string, boolean>();
    try {
      rows = await store.enabledRows(this.ctx.db);
      revision = await store.stateRevision(this.ctx.db);
    } catch {
      databaseError = 'database snapshot unavailable';
    }
    const pending = await this.pending();
    const plugins = [];
    for (const pkg of [...this.running.values()].sort((a, b) => (a.manifest.key < b.manifest.key ? -1 : 1))) {
      const enabled = rows.get(pkg.manifest.key) ?? defaultEnabled(pkg);
      plugins.push({
        key: pkg.manifest.key,
        version: pkg.manifest.version,
        layer: pkg.layer,
        enabled,
        runtime_status: enabled ? 'registered' : 'disabled',
        route_count: pkg.manifest.routes.length,
        channel_count: databaseError ? 0 : (await store.boundChannels(this.ctx.db, pkg.manifest.key)).length,
        in_flight_count: databaseError ? 0 : await store.inFlightCount(this.ctx.db, pkg.manifest.key),
      });
    }
    return {
      current_generation: this.rebuild.generation,
      generation_published_at: this.rebuild.attempted_at,
      database_revision: revision,
      ...(databaseError ? { database_error: databaseError } : {}),
      last_rebuild: { ...this.rebuild, plugin_error_count: Object.keys(this.errors).length },
      plugin_errors: this.errors,
      restart_required: pending.length > 0,
      pending,
      plugins,
      plugin_dir: this.ctx.config.gateway.pluginDir,
      factory_dir: this.dirs().factory,
    };
  }

  /** GS03: tasks of every plugin and owner, newest first. */
  async tasks(filter: store.TaskFilter, page: number, pageSize: number) {
    const { rows, total } = await store.taskPage(this.ctx.db, filter, pageSize, (page - 1) * pageSize);
    return { items: rows.map((t) => ({ ...taskView(t), owner: t.owner_name })), total, page, page_size: pageSize };
  }

  /** G84: the enabled running plugins a channel may bind, by sortPriority then key. */
  async options() {
    const rows = await store.enabledRows(this.ctx.db);
    return [...this.running.values()]
      .filter((p) => rows.get(p.manifest.key) ?? defaultEnabled(p))
      .map(({ manifest: m, hasIcon }) => ({
        key: m.key,
        name: m.name,
        description: m.description ?? '',
        website: m.website ?? '',
        baseUrl: m.baseUrl ?? '',
        icon: m.icon ?? '',
        hasIcon,
        models: m.models,
        channelTypes: m.channelTypes,
        sortPriority: m.sortPriority ?? 0,
        upstreams: m.upstreams ?? [],
        usageProfiles: m.usageProfiles ?? [],
        usageSchema: m.usageSchema ?? {},
      }))
      .sort((a, b) => b.sortPriority - a.sortPriority || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}
