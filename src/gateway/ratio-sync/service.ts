import { AppError } from '../../kit/http/errors.js';
import { parseJson } from '../../kit/upstream/client.js';
import { UpstreamError } from '../../kit/upstream/errors.js';
import { excerpt } from '../../kit/upstream/scrub.js';
import { audit, type Actor } from '../audit/store.js';
import type { ChannelService } from '../channels/service.js';
import type { GatewayContext } from '../context.js';
import { upstreamMessage } from '../upstream/http.js';
import { inputTarget, type UpstreamTarget } from '../upstream/target.js';
import { RATIO_FIELDS, readRatios, type RatioField, type Ratios, type RatioValue } from './formats.js';
import { validateRatioConfig } from './validate.js';

export const RATIO_OPTION = 'option:ratio_config';
/** Price multipliers per channel group (the reference's GroupRatio); a group not listed has 1. */
export const GROUP_RATIO_OPTION = 'option:group_ratio';
/** The reference's two preset sources, offered by G82 with these ids. */
export const PRESETS = [
  { id: -100, name: '官方倍率预设', base_url: 'https://basellm.github.io', endpoint: '/llm-metadata/api/newapi/ratio_config-v1-base.json' },
  { id: -101, name: 'models.dev 价格预设', base_url: 'https://models.dev', endpoint: '/api.json' },
];
const CONCURRENCY = 8;
const ATTEMPTS = 3;
const MAX_BYTES = 10 * 1024 * 1024;

export interface UpstreamSource {
  id?: number;
  name: string;
  base_url: string;
  endpoint?: string;
}

interface Source {
  name: string;
  url: string;
  target: UpstreamTarget;
  headers: Record<string, string>;
}

type Fetched = { name: string; ratios: Ratios | null; error?: string };

/** The reference's placeholder a source shows for models it does not know: ratio 37.5 with completion 1. */
const placeholder = (r: Ratios, model: string) => r.model_ratio?.[model] === 37.5 && r.completion_ratio?.[model] === 1;

/** Ratio sync (G82, G83): which sources there are, and how their ratios differ from this gateway's. */
export class RatioSyncService {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly channels: ChannelService,
  ) {}

  /** G82: channels with a base URL (never a key) and the presets. */
  async sources() {
    const rows = await this.ctx.db.selectFrom('channels').select(['id', 'name', 'base_url', 'status', 'type']).where('base_url', '!=', '').orderBy('id').execute();
    return [...rows.map((r) => ({ id: Number(r.id), name: r.name, base_url: r.base_url, status: Number(r.status), type: Number(r.type) })), ...PRESETS.map(({ id, name, base_url }) => ({ id, name, base_url, status: 1, type: 0 }))];
  }

  async current(): Promise<Ratios> {
    const row = await this.ctx.db.selectFrom('gateway_meta').select('value').where('key', '=', RATIO_OPTION).executeTakeFirst();
    return row ? (readRatios({ data: JSON.parse(row.value) }) ?? {}) : {};
  }

  async groupRatios(): Promise<Record<string, number>> {
    const row = await this.ctx.db.selectFrom('gateway_meta').select('value').where('key', '=', GROUP_RATIO_OPTION).executeTakeFirst();
    return row ? (JSON.parse(row.value) as Record<string, number>) : {};
  }

  /** Called after each change of the stored ratios (the relay drops its cached prices). */
  private readonly changeListeners = new Set<() => void>();
  onChange(listener: () => void) {
    this.changeListeners.add(listener);
  }

  /**
   * Stores this gateway's own ratios (the option the comparison reads and the relay prices with), checked by
   * validateRatioConfig (each fault a named code naming the field). A `group_ratio` map (group → multiplier
   * ≥ 0) in the same object is stored beside; left out, the stored one stays.
   */
  async setCurrent(config: unknown) {
    const { ratios, groupRatio: groups } = validateRatioConfig(config);
    await this.ctx.db.transaction().execute(async (trx) => {
      for (const [key, value] of [[RATIO_OPTION, JSON.stringify(ratios)], ...(groups ? [[GROUP_RATIO_OPTION, JSON.stringify(groups)]] : [])]) {
        await trx.insertInto('gateway_meta').values({ key: key!, value: value! }).onConflict((oc) => oc.column('key').doUpdateSet({ value: value! })).execute();
      }
    });
    for (const f of this.changeListeners) f();
    return groups ? { ...ratios, group_ratio: groups } : ratios;
  }

  private async resolve(channelIds: number[], upstreams: UpstreamSource[]): Promise<Source[]> {
    const out: Source[] = [];
    for (const id of channelIds) {
      const preset = PRESETS.find((p) => p.id === id);
      if (preset) {
        out.push({ name: preset.name, url: preset.base_url + preset.endpoint, target: inputTarget({ type: 0, base_url: preset.base_url, key: '' }), headers: {} });
        continue;
      }
      const t = await this.channels.target(id);
      // An OpenRouter channel is asked for its models with their prices, with its own key.
      const openrouter = t.type === 20;
      out.push({ name: `${t.name}(${id})`, url: t.baseUrl + (openrouter ? '/v1/models' : '/api/pricing'), target: t, headers: openrouter ? { authorization: `Bearer ${t.key}` } : {} });
    }
    for (const u of upstreams) {
      const base = u.base_url.replace(/\/+$/, '');
      const endpoint = !u.endpoint ? '/api/pricing' : u.endpoint === 'openrouter' ? '/v1/models' : u.endpoint;
      if (!endpoint.startsWith('/')) throw new AppError('INVALID_PARAMETERS', { params: { detail: 'endpoint must start with /' } });
      out.push({ name: u.name, url: base + endpoint, target: inputTarget({ type: 0, base_url: base, key: '' }), headers: {} });
    }
    return out;
  }

  /** One source, up to ATTEMPTS tries for network failures and 5xx, with a growing pause between them. */
  private async fetchOne(s: Source, timeoutMs: number): Promise<Fetched> {
    let last = '';
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        const res = await this.ctx.upstream.request({ url: s.url, headers: { accept: 'application/json', ...s.headers, ...s.target.headers }, proxy: s.target.proxy, timeoutMs, maxBytes: MAX_BYTES });
        if (res.status >= 500) last = `HTTP ${res.status}: ${upstreamMessage(res.text, s.target)}`;
        else if (res.status >= 300) return { name: s.name, ratios: null, error: `HTTP ${res.status}: ${upstreamMessage(res.text, s.target)}` };
        else {
          const ratios = readRatios(parseJson(res.text));
          return ratios ? { name: s.name, ratios } : { name: s.name, ratios: null, error: 'the answer is not a ratio or pricing list: ' + excerpt(res.text, s.target.secrets, 80) };
        }
      } catch (e) {
        if (!(e instanceof UpstreamError)) throw e;
        if (e.kind === 'refused' || e.kind === 'bad_url' || e.kind === 'too_large') return { name: s.name, ratios: null, error: `${e.kind}: ${excerpt(e.detail, s.target.secrets)}` };
        last = `${e.kind}: ${excerpt(e.detail, s.target.secrets)}`;
      }
      if (attempt < ATTEMPTS) await new Promise((r) => setTimeout(r, 200 * 2 ** (attempt - 1)));
    }
    return { name: s.name, ratios: null, error: last };
  }

  /** G83: fetches every source (CONCURRENCY at a time) and reports how each differs; saves nothing. */
  async fetch(actor: Actor, body: { channel_ids?: number[]; upstreams?: UpstreamSource[]; timeout?: number }) {
    const sources = await this.resolve(body.channel_ids ?? [], body.upstreams ?? []);
    if (!sources.length) throw new AppError('RATIO_SYNC_NO_SOURCE');
    const timeoutMs = (body.timeout ?? 10) * 1000;
    const fetched: Fetched[] = new Array(sources.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, sources.length) }, async () => {
        while (next < sources.length) {
          const i = next++;
          fetched[i] = await this.fetchOne(sources[i]!, timeoutMs);
        }
      }),
    );
    const current = await this.current();
    const result = { differences: differences(current, fetched), prices: prices(current, fetched), test_results: fetched.map((f) => (f.ratios ? { name: f.name, status: 'success' } : { name: f.name, status: 'error', error: f.error })) };
    await audit(this.ctx.db, actor, 'G83', null, { sources: sources.map((s) => s.name), succeeded: fetched.filter((f) => f.ratios).length, failed: fetched.filter((f) => !f.ratios).length });
    return result;
  }
}

type Differences = Record<string, Partial<Record<RatioField, { current: RatioValue | null; upstreams: Record<string, RatioValue | 'same'>; confidence: Record<string, boolean> }>>>;

/** Models and fields where at least one source has a value other than this gateway's. */
function differences(current: Ratios, fetched: Fetched[]): Differences {
  const out: Differences = {};
  for (const field of RATIO_FIELDS) {
    const models = new Set(fetched.flatMap((f) => Object.keys(f.ratios?.[field] ?? {})));
    for (const model of models) {
      const mine = current[field]?.[model] ?? null;
      const upstreams: Record<string, RatioValue | 'same'> = {};
      const confidence: Record<string, boolean> = {};
      let differs = false;
      for (const f of fetched) {
        const theirs = f.ratios?.[field]?.[model];
        if (theirs === undefined) continue;
        upstreams[f.name] = theirs === mine ? 'same' : theirs;
        confidence[f.name] = !placeholder(f.ratios!, model);
        if (theirs !== mine) differs = true;
      }
      if (differs) (out[model] ??= {})[field] = { current: mine, upstreams, confidence };
    }
  }
  return out;
}

/** Per-call prices (model_price) by model: this gateway's and each source's. */
function prices(current: Ratios, fetched: Fetched[]) {
  const out: Record<string, { current: Record<string, RatioValue>; upstreams: Record<string, Record<string, RatioValue>> }> = {};
  for (const f of fetched) {
    for (const [model, value] of Object.entries(f.ratios?.model_price ?? {})) {
      const entry = (out[model] ??= { current: current.model_price?.[model] !== undefined ? { model_price: current.model_price[model]! } : {}, upstreams: {} });
      entry.upstreams[f.name] = { model_price: value };
    }
  }
  return out;
}
