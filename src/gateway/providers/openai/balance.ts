import { badResponse, okJson, send } from '../../upstream/http.js';
import type { UpstreamTarget } from '../../upstream/target.js';
import type { BalanceReader } from '../types.js';

const bearer = (t: UpstreamTarget) => ({ authorization: `Bearer ${t.key}`, accept: 'application/json' });

function num(v: unknown, what: string): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw badResponse(`${what} is not a number`);
  return n;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** OpenAI and Custom: the subscription's hard limit minus this period's usage (cents), as the reference. */
const openaiBilling: BalanceReader = {
  async read(ctx, t, base) {
    const sub = okJson<{ hard_limit_usd?: unknown; has_payment_method?: unknown }>(await send(ctx.upstream, t, { url: `${base}/v1/dashboard/billing/subscription`, headers: bearer(t) }), t);
    const now = new Date();
    const start = sub.has_payment_method === true ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) : new Date(now.getTime() - 100 * 86400_000);
    const usage = okJson<{ total_usage?: unknown }>(
      await send(ctx.upstream, t, { url: `${base}/v1/dashboard/billing/usage?start_date=${day(start)}&end_date=${day(now)}`, headers: bearer(t) }),
      t,
    );
    return { balance: num(sub.hard_limit_usd, 'hard_limit_usd') - num(usage.total_usage, 'total_usage') / 100, currency: 'USD' };
  },
};

const creditGrants = (field: 'total_remaining' | 'total_available', host: string): BalanceReader => ({
  host,
  async read(ctx, t, base) {
    const body = okJson<Record<string, unknown>>(await send(ctx.upstream, t, { url: `${base}/dashboard/billing/credit_grants`, headers: bearer(t) }), t);
    return { balance: num(body[field], field), currency: 'USD' };
  },
});

/**
 * Channel type → how to read its balance (the reference's list in controller/channel-billing.go): OpenAI's
 * own billing API, which Custom (8) channels have too, and compatible vendors' own.
 */
export const OPENAI_STYLE_BALANCES: Record<number, BalanceReader> = {
  1: openaiBilling,
  8: openaiBilling,
  10: {
    host: 'https://aiproxy.io',
    async read(ctx, t, base) {
      const body = okJson<{ success?: unknown; message?: unknown; data?: { totalPoints?: unknown } }>(
        await send(ctx.upstream, t, { url: `${base}/api/report/getUserOverview`, headers: { 'api-key': t.key, accept: 'application/json' } }),
        t,
      );
      if (body.success !== true) throw badResponse('the provider reported no success');
      return { balance: num(body.data?.totalPoints, 'totalPoints'), currency: 'points' };
    },
  },
  12: creditGrants('total_remaining', 'https://api.api2gpt.com'),
  13: creditGrants('total_available', 'https://api.aigc2d.com'),
  20: {
    async read(ctx, t, base) {
      const body = okJson<{ data?: { total_credits?: unknown; total_usage?: unknown } }>(await send(ctx.upstream, t, { url: `${base}/v1/credits`, headers: bearer(t) }), t);
      return { balance: num(body.data?.total_credits, 'total_credits') - num(body.data?.total_usage, 'total_usage'), currency: 'USD' };
    },
  },
  25: {
    async read(ctx, t, base) {
      const body = okJson<{ data?: { available_balance?: unknown } }>(await send(ctx.upstream, t, { url: `${base}/v1/users/me/balance`, headers: bearer(t) }), t);
      return { balance: num(body.data?.available_balance, 'available_balance'), currency: 'CNY' };
    },
  },
  40: {
    async read(ctx, t, base) {
      const body = okJson<{ code?: unknown; message?: unknown; data?: { totalBalance?: unknown } }>(await send(ctx.upstream, t, { url: `${base}/v1/user/info`, headers: bearer(t) }), t);
      if (body.code !== 20000) throw badResponse(`the provider answered code ${String(body.code)}`);
      return { balance: num(body.data?.totalBalance, 'totalBalance'), currency: 'CNY' };
    },
  },
  43: {
    async read(ctx, t, base) {
      const body = okJson<{ balance_infos?: unknown }>(await send(ctx.upstream, t, { url: `${base}/user/balance`, headers: bearer(t) }), t);
      const infos = Array.isArray(body.balance_infos) ? (body.balance_infos as { currency?: unknown; total_balance?: unknown }[]) : [];
      const info = infos.find((i) => i.currency === 'CNY') ?? infos.find((i) => i.currency === 'USD');
      if (!info) throw badResponse('no CNY or USD balance in balance_infos');
      return { balance: num(info.total_balance, 'total_balance'), currency: String(info.currency) };
    },
  },
};
