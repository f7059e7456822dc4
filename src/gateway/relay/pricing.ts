import type { RelayPrices, RelayUsage } from '../../contract/relay.js';
import type { Ratios } from '../ratio-sync/formats.js';

/** The reference's quota unit: 500,000 quota = 1 USD; model_ratio 1 = 1 quota per prompt token ($2 per 1M). */
export const QUOTA_PER_USD = 500_000;

export type Price =
  | { kind: 'ratio'; modelRatio: number; completionRatio: number; cacheRatio: number; groupRatio: number }
  | { kind: 'fixed'; usdPerCall: number; groupRatio: number };

export interface PriceSource {
  ratios(): Promise<Ratios>;
  groupRatios(): Promise<Record<string, number>>;
}

const num = (map: Record<string, unknown> | undefined, key: string): number | undefined => {
  const v = map?.[key];
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
};

/**
 * Prices from the gateway's ratio configuration (the one source of prices), re-read at most every `ttlMs`.
 * A model with a `model_price` is priced per call; otherwise it needs a `model_ratio`; else it has no price.
 */
export class Pricing {
  private cached: { at: number; ratios: Ratios; groups: Record<string, number> } | null = null;

  constructor(
    private readonly source: PriceSource,
    private readonly ttlMs: number,
  ) {}

  private async load() {
    if (this.cached && Date.now() - this.cached.at < this.ttlMs) return this.cached;
    const [ratios, groups] = await Promise.all([this.source.ratios(), this.source.groupRatios()]);
    this.cached = { at: Date.now(), ratios, groups };
    return this.cached;
  }

  /** Forgets the prices read, so the next call reads the ratio configuration again (it just changed). */
  invalidate() {
    this.cached = null;
  }

  /**
   * The price list of these models as price() charges them (without the group ratio, listed apart): a
   * model_price makes a per-call price, else a model_ratio a token price, else null (no price).
   */
  async table(models: string[]): Promise<RelayPrices> {
    const { ratios, groups } = await this.load();
    // Entries, not assignments: a model named __proto__ stays a plain key.
    const priced = models.map((model): [string, RelayPrices['models'][string]] => {
      const usdPerCall = num(ratios.model_price, model);
      if (usdPerCall !== undefined) return [model, { quota_type: 1, model_ratio: 0, model_price: usdPerCall, completion_ratio: 0 }];
      const modelRatio = num(ratios.model_ratio, model);
      if (modelRatio === undefined) return [model, null];
      return [model, { quota_type: 0, model_ratio: modelRatio, model_price: 0, completion_ratio: num(ratios.completion_ratio, model) ?? 1 }];
    });
    const ratiosOfGroups = Object.keys(groups ?? {}).flatMap((g): [string, number][] => {
      const r = num(groups, g);
      return r === undefined ? [] : [[g, r]];
    });
    return { models: Object.fromEntries(priced), group_ratio: Object.fromEntries(ratiosOfGroups) };
  }

  async price(model: string, group: string): Promise<Price | null> {
    const { ratios, groups } = await this.load();
    const groupRatio = num(groups, group) ?? 1;
    const usdPerCall = num(ratios.model_price, model);
    if (usdPerCall !== undefined) return { kind: 'fixed', usdPerCall, groupRatio };
    const modelRatio = num(ratios.model_ratio, model);
    if (modelRatio === undefined) return null;
    return { kind: 'ratio', modelRatio, completionRatio: num(ratios.completion_ratio, model) ?? 1, cacheRatio: num(ratios.cache_ratio, model) ?? 1, groupRatio };
  }
}

/** A token count as a price's input: anything but a finite number ≥ 0 counts nothing. */
const tokens = (n: number) => (Number.isFinite(n) && n > 0 ? n : 0);

/**
 * The reference's quota formula: (uncached prompt + cached × cache ratio + completion × completion ratio) ×
 * model ratio × group ratio, rounded, and at least 1 when the call was priced above zero; a fixed price is
 * price × `units` × 500,000 × group ratio, `units` how many times the call pays its price (an image call's n
 * × its size ratio, see formats/images; 1 for every other call; token prices ignore it, as the reference's).
 * Reasoning tokens are part of the completion tokens. A `served` call of a model priced above zero costs at
 * least 1, whatever its usage; the quota is always a whole number from 0 to Number.MAX_SAFE_INTEGER (never
 * NaN or negative, whatever the usage holds).
 */
export function costOf(price: Price | null, usage: RelayUsage, served = false, units = 1): { quota: number; usd: number } {
  if (!price) return { quota: 0, usd: 0 };
  let exact: number;
  if (price.kind === 'fixed') {
    exact = price.usdPerCall * (Number.isFinite(units) && units > 0 ? units : 1) * QUOTA_PER_USD * price.groupRatio;
  } else {
    const prompt = tokens(usage.prompt_tokens);
    const cached = Math.min(tokens(usage.cached_tokens), prompt);
    const billed = prompt - cached + cached * price.cacheRatio + tokens(usage.completion_tokens) * price.completionRatio;
    exact = billed * price.modelRatio * price.groupRatio;
  }
  let quota = Number.isNaN(exact) ? 0 : Math.min(Math.max(0, Math.round(exact)), Number.MAX_SAFE_INTEGER);
  const pricedAboveZero = price.kind === 'fixed' ? price.usdPerCall * price.groupRatio > 0 : price.modelRatio * price.groupRatio > 0;
  if (quota === 0 && (exact > 0 || (served && pricedAboveZero))) quota = 1;
  return { quota, usd: quota / QUOTA_PER_USD };
}
