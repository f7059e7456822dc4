/**
 * The ratio and price formats an upstream may answer, read into one shape: field → model → value. Fields
 * are new-api's (model_ratio 1 = $0.002 per 1K prompt tokens, i.e. $2 per 1M; completion and cache ratios
 * relative to the prompt price; model_price per call in USD).
 */
export const RATIO_FIELDS = ['model_ratio', 'completion_ratio', 'cache_ratio', 'create_cache_ratio', 'image_ratio', 'audio_ratio', 'audio_completion_ratio', 'model_price', 'billing_mode', 'billing_expr'] as const;
export type RatioField = (typeof RATIO_FIELDS)[number];
export type RatioValue = number | string;
export type Ratios = Partial<Record<RatioField, Record<string, RatioValue>>>;

const MAX_MODELS = 20_000;

function put(out: Ratios, field: RatioField, model: unknown, value: unknown) {
  if (typeof model !== 'string' || !model || model.length > 255) return;
  const ok = (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && (field === 'billing_mode' || field === 'billing_expr') && value.length <= 2000);
  if (!ok) return;
  const map = (out[field] ??= {});
  if (Object.keys(map).length < MAX_MODELS) map[model] = value as RatioValue;
}

/** Rounds conversions so that float noise does not show as a difference. */
const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** `/api/ratio_config`: `{data: {model_ratio: {model: n}, …}}`. */
function fromRatioConfig(data: Record<string, unknown>): Ratios {
  const out: Ratios = {};
  for (const field of RATIO_FIELDS) {
    const map = data[field];
    if (map && typeof map === 'object' && !Array.isArray(map)) for (const [m, v] of Object.entries(map)) put(out, field, m, v);
  }
  return out;
}

/** `/api/pricing`: `{data: [{model_name, quota_type, model_ratio, model_price, completion_ratio, …}]}`. */
function fromPricingList(list: unknown[]): Ratios {
  const out: Ratios = {};
  for (const item of list.slice(0, MAX_MODELS)) {
    const p = item as Record<string, unknown>;
    const model = p?.model_name;
    if (p?.quota_type === 1) put(out, 'model_price', model, p.model_price);
    else for (const f of RATIO_FIELDS) if (f !== 'model_price') put(out, f, model, p?.[f]);
  }
  return out;
}

/** OpenRouter `/v1/models`: per-token USD prices (strings) → ratios. */
function fromOpenRouter(list: unknown[]): Ratios {
  const out: Ratios = {};
  for (const item of list.slice(0, MAX_MODELS)) {
    const m = item as { id?: unknown; pricing?: { prompt?: unknown; completion?: unknown; input_cache_read?: unknown } };
    const prompt = Number(m?.pricing?.prompt);
    const completion = Number(m?.pricing?.completion);
    const cache = Number(m?.pricing?.input_cache_read);
    if (!Number.isFinite(prompt) || prompt <= 0) continue;
    put(out, 'model_ratio', m.id, round((prompt * 1e6) / 2));
    if (Number.isFinite(completion)) put(out, 'completion_ratio', m.id, round(completion / prompt));
    if (Number.isFinite(cache) && cache > 0) put(out, 'cache_ratio', m.id, round(cache / prompt));
  }
  return out;
}

/** models.dev `/api.json`: `{provider: {models: {id: {cost: {input, output, cache_read}}}}}`, USD per 1M tokens. */
function fromModelsDev(providers: Record<string, unknown>): Ratios {
  const out: Ratios = {};
  for (const provider of Object.values(providers)) {
    const models = (provider as { models?: Record<string, unknown> })?.models;
    if (!models || typeof models !== 'object') continue;
    for (const [id, def] of Object.entries(models)) {
      const cost = (def as { cost?: { input?: unknown; output?: unknown; cache_read?: unknown } })?.cost;
      const input = Number(cost?.input);
      if (!Number.isFinite(input) || input <= 0 || out.model_ratio?.[id] !== undefined) continue;
      put(out, 'model_ratio', id, round(input / 2));
      const output = Number(cost?.output);
      if (Number.isFinite(output)) put(out, 'completion_ratio', id, round(output / input));
      const cacheRead = Number(cost?.cache_read);
      if (Number.isFinite(cacheRead) && cacheRead > 0) put(out, 'cache_ratio', id, round(cacheRead / input));
    }
  }
  return out;
}

/** Reads any of the four shapes; null when the body is none of them. */
export function readRatios(body: unknown): Ratios | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as { data?: unknown };
  if (Array.isArray(b.data)) {
    const first = b.data[0] as Record<string, unknown> | undefined;
    if (first && 'pricing' in first && 'id' in first) return fromOpenRouter(b.data);
    return fromPricingList(b.data);
  }
  if (b.data && typeof b.data === 'object') return fromRatioConfig(b.data as Record<string, unknown>);
  const values = Object.values(body as Record<string, unknown>);
  if (values.length && values.every((p) => p && typeof p === 'object' && 'models' in (p as object))) return fromModelsDev(body as Record<string, unknown>);
  return null;
}
