import { AppError } from '../../kit/http/errors.js';
import { audit, audited, type Actor } from '../audit/store.js';
import type { GatewayContext } from '../context.js';
import { deployRequest, type CreateDeployment } from './create-request.js';
import { IoNetClient, queryString } from './ionet.js';
import { readDeploymentSettings, writeDeploymentSettings } from './settings.js';
import { containerView, deploymentDetail, deploymentItem } from './views.js';

type Obj = Record<string, unknown>;
const PROVIDER = 'io.net';
const STATUSES = ['running', 'completed', 'failed', 'deployment requested', 'termination requested', 'destroyed'];

export interface PriceQuery {
  location_ids: number[];
  hardware_id: number;
  replica_count: number;
  gpus_per_container?: number;
  duration_hours?: number;
  duration_type?: string;
  duration_qty?: number;
  hardware_qty?: number;
  currency?: string;
}

export interface LogQuery {
  container_id: string;
  level?: string;
  stream?: string;
  cursor?: string;
  limit?: number;
  start_time?: string;
  end_time?: string;
}

const DURATION_HOURS: Record<string, [string, number]> = { hour: ['hourly', 1], day: ['daily', 24], week: ['weekly', 168], month: ['monthly', 720] };

/** Model deployments on io.net (G41–G59): settings, the provider's catalogue, and deployments' life cycle. */
export class DeploymentService {
  constructor(private readonly ctx: GatewayContext) {}

  private client(apiKey: string) {
    return new IoNetClient(this.ctx.upstream, this.ctx.config.gateway.ionet.baseUrl, apiKey, this.ctx.config.gateway.ionet.timeoutMs);
  }

  /** The provider client, when deployments are enabled and a key is stored; otherwise 400 DEPLOYMENT_NOT_ENABLED. */
  async provider(): Promise<IoNetClient> {
    const s = await readDeploymentSettings(this.ctx);
    if (!s.enabled || !s.apiKey) throw new AppError('DEPLOYMENT_NOT_ENABLED');
    return this.client(s.apiKey);
  }

  setSettings(change: { enabled?: boolean; apiKey?: string }) {
    return writeDeploymentSettings(this.ctx, change);
  }

  private async hardware(io: IoNetClient) {
    const r = await io.call<{ hardware?: Obj[]; total?: number }>('GET', '/hardware/max-gpus-per-container');
    const hardware = Array.isArray(r?.hardware) ? r.hardware : [];
    const types = hardware.map((h) => ({
      id: Number(h.hardware_id) || 0,
      name: String(h.hardware_name ?? '').trim() || `hardware ${h.hardware_id}`,
      brand_name: String(h.brand_name ?? '').trim(),
      max_gpus: Number(h.max_gpus_per_container) || 0,
      available: (Number(h.available) || 0) > 0,
      available_count: Number(h.available) || 0,
    }));
    const total = Number(r?.total) || types.reduce((n, t) => n + t.available_count, 0);
    return { hardware_types: types, total: types.length, total_available: total };
  }

  /** G57: never fails for the provider's sake: an unreachable or refusing provider is can_connect false. */
  async settings() {
    const s = await readDeploymentSettings(this.ctx);
    const base = { provider: PROVIDER, enabled: s.enabled, configured: !!s.apiKey, can_connect: false, hardware_count: 0, total_available: 0 };
    if (!s.enabled || !s.apiKey) return base;
    try {
      const h = await this.hardware(this.client(s.apiKey));
      return { ...base, can_connect: true, hardware_count: h.total, total_available: h.total_available };
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      return { ...base, error_code: e.code };
    }
  }

  /** G58 / G59: the given key, else the stored one; nothing is stored. */
  async testConnection(actor: Actor, operation: 'G58' | 'G59', apiKey?: string) {
    const key = apiKey?.trim() || (await readDeploymentSettings(this.ctx)).apiKey;
    if (!key) throw new AppError('DEPLOYMENT_NOT_ENABLED');
    try {
      const h = await this.hardware(this.client(key));
      await audit(this.ctx.db, actor, operation, null, { ok: true, stored_key: !apiKey?.trim() });
      return { hardware_count: h.total, total_available: h.total_available };
    } catch (e) {
      await audit(this.ctx.db, actor, operation, null, { failed: e instanceof AppError ? e.code : 'error', stored_key: !apiKey?.trim() });
      throw e;
    }
  }

  async hardwareTypes() {
    return this.hardware(await this.provider());
  }

  async locations() {
    const r = await (await this.provider()).call<{ locations?: Obj[]; total?: number }>('GET', '/locations');
    const raw = Array.isArray(r?.locations) ? r.locations : [];
    const locations = raw.map((l) => ({ ...l, iso2: String(l.iso2 ?? '').trim().toUpperCase() }));
    return { locations, total: Number(r?.total) || raw.reduce((n, l) => n + (Number(l.available) || 0), 0) };
  }

  async availableReplicas(hardwareId: number, gpuCount: number) {
    const r = await (await this.provider()).call<unknown>('GET', `/available-replicas${queryString({ hardware_id: hardwareId, hardware_qty: gpuCount })}`);
    const list = Array.isArray(r) ? (r as Obj[]) : [];
    return { replicas: list.map((x) => ({ location_id: Number(x.id) || 0, location_name: String(x.name ?? ''), iso2: String(x.iso2 ?? ''), hardware_id: hardwareId, available_count: Number(x.available_replicas) || 0, max_gpus: gpuCount })) };
  }

  async checkName(name: string) {
    const r = await (await this.provider()).call<unknown>('GET', `/clusters/check_cluster_name_availability${queryString({ cluster_name: name })}`);
    return { available: r === true || (r as { available?: unknown })?.available === true, name };
  }

  async priceEstimation(q: PriceQuery) {
    const unit = (q.duration_type ?? 'hour').toLowerCase().replace(/s$|ly$/, '').replace(/^dai$/, 'day');
    const [apiType, hoursPer] = DURATION_HOURS[unit] ?? DURATION_HOURS.hour!;
    const qty = q.duration_qty ?? q.duration_hours ?? 0;
    const hardwareQty = q.hardware_qty ?? q.gpus_per_container ?? 0;
    if (qty < 1) throw new AppError('DEPLOYMENT_INVALID', { params: { detail: 'duration_qty (or duration_hours) must be at least 1' } });
    if (hardwareQty < 1) throw new AppError('DEPLOYMENT_INVALID', { params: { detail: 'hardware_qty (or gpus_per_container) must be at least 1' } });
    const currency = (q.currency ?? 'usdc').trim() || 'usdc';
    const r = await (await this.provider()).call<Obj>(
      'GET',
      `/price${queryString({ location_ids: q.location_ids, hardware_id: q.hardware_id, hardware_qty: hardwareQty, gpus_per_container: q.gpus_per_container, duration_type: apiType, duration_qty: qty, duration_hours: q.duration_hours, replica_count: q.replica_count, currency })}`,
    );
    const total = Number(r?.total_cost_usdc) || 0;
    const fees = (Number(r?.ionet_fee) || 0) + (Number(r?.currency_conversion_fee) || 0);
    return { estimated_cost: total, currency: currency.toUpperCase(), estimation_valid: true, price_breakdown: { compute_cost: total - fees, total_cost: total, hourly_rate: total / Math.max(1, qty * hoursPer) } };
  }

  /** G41 / G56: one page of the provider's deployments, newest first; G56 filters the page by name. */
  async list(q: { status?: string; keyword?: string; p?: number; page_size?: number }) {
    const page = Math.max(1, q.p ?? 1);
    const pageSize = Math.min(100, Math.max(1, q.page_size ?? 10));
    const r = await (await this.provider()).call<{ deployments?: Obj[]; total?: number; statuses?: unknown }>(
      'GET',
      `/deployments${queryString({ status: q.status, page, page_size: pageSize, sort_by: 'created_at', sort_order: 'desc' })}`,
    );
    let items = (Array.isArray(r?.deployments) ? r.deployments : []).map(deploymentItem);
    const keyword = q.keyword?.trim().toLowerCase();
    if (keyword) items = items.filter((d) => d.deployment_name.toLowerCase().includes(keyword));
    const counts: Record<string, number> = { all: Number(r?.total) || 0 };
    for (const s of STATUSES) counts[s] = 0;
    for (const d of items) counts[d.status] = (counts[d.status] ?? 0) + 1;
    return { items, page, page_size: pageSize, total: keyword ? items.length : Number(r?.total) || items.length, status_counts: counts };
  }

  async get(id: string) {
    return deploymentDetail(await (await this.provider()).call<Obj>('GET', `/deployment/${encodeURIComponent(id)}`));
  }

  async create(actor: Actor, body: CreateDeployment) {
    return audited(this.ctx.db, actor, 'G42', null, { name: body.resource_private_name, hardware_id: body.hardware_id, replicas: body.container_config.replica_count }, async () => {
      const r = await (await this.provider()).call<Obj>('POST', '/deploy', deployRequest(body));
      return { deployment_id: String(r?.deployment_id ?? ''), status: String(r?.status ?? ''), message: 'deployment requested' };
    });
  }

  async update(actor: Actor, id: string, body: Obj) {
    return audited(this.ctx.db, actor, 'G45', null, { deployment_id: id, fields: Object.keys(body) }, async () => {
      const r = await (await this.provider()).call<Obj>('PATCH', `/deployment/${encodeURIComponent(id)}`, body);
      return { deployment_id: String(r?.deployment_id ?? id), status: String(r?.status ?? '') };
    });
  }

  async remove(actor: Actor, id: string) {
    return audited(this.ctx.db, actor, 'G43', null, { deployment_id: id }, async () => {
      const r = await (await this.provider()).call<Obj>('DELETE', `/deployment/${encodeURIComponent(id)}`);
      return { deployment_id: String(r?.deployment_id ?? id), status: String(r?.status ?? 'termination requested'), message: 'termination requested' };
    });
  }

  async extend(actor: Actor, id: string, durationHours: number) {
    return audited(this.ctx.db, actor, 'G48', null, { deployment_id: id, duration_hours: durationHours }, async () =>
      deploymentDetail(await (await this.provider()).call<Obj>('POST', `/deployment/${encodeURIComponent(id)}/extend`, { duration_hours: durationHours })),
    );
  }

  async rename(actor: Actor, id: string, name: string) {
    return audited(this.ctx.db, actor, 'G50', null, { deployment_id: id, name }, async () => {
      if (!(await this.checkName(name)).available) throw new AppError('DEPLOYMENT_NAME_TAKEN');
      const r = await (await this.provider()).call<Obj>('PUT', `/clusters/${encodeURIComponent(id)}/update-name`, { cluster_name: name });
      return { id, name, status: String(r?.status ?? 'success'), message: String(r?.message ?? '') };
    });
  }

  async containers(id: string) {
    const r = await (await this.provider()).call<{ total?: number; workers?: Obj[] }>('GET', `/deployment/${encodeURIComponent(id)}/containers`);
    const containers = (Array.isArray(r?.workers) ? r.workers : []).map((c) => containerView(id, c));
    return { containers, total: Number(r?.total) || containers.length };
  }

  async container(id: string, containerId: string) {
    return containerView(id, await (await this.provider()).call<Obj>('GET', `/deployment/${encodeURIComponent(id)}/container/${encodeURIComponent(containerId)}`));
  }

  private logPath(id: string, q: LogQuery, follow: boolean) {
    return `/deployment/${encodeURIComponent(id)}/log/${encodeURIComponent(q.container_id)}${queryString({ level: q.level, stream: q.stream, limit: q.limit ?? 100, cursor: q.cursor, follow: follow || undefined, start_time: q.start_time, end_time: q.end_time })}`;
  }

  /** G49 without follow: the log lines (text, scrubbed) of one container. */
  async logs(id: string, q: LogQuery) {
    const io = await this.provider();
    const text = io.scrub(await io.text(this.logPath(id, q, false)));
    return { container_id: q.container_id, logs: text.split(/\r?\n/).filter((l) => l.trim()).map((message) => ({ message })) };
  }

  /** G49 with follow: the provider's log stream, line by line, until it ends or `signal` fires. */
  async followLogs(id: string, q: LogQuery, signal: AbortSignal) {
    const io = await this.provider();
    const cfg = this.ctx.config.gateway.ionet;
    const stream = await io.lines(this.logPath(id, q, true), cfg.logIdleMs, cfg.logFollowMs, signal);
    return { io, stream };
  }
}
