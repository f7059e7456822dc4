import { LOG_TYPE, type CustomerLog, type CustomerPort, type LogQuery } from '../../../contract/customer.js';
import type { EdgeContext } from '../../context.js';
import { checkUserId, customerOwnerId } from '../owners.js';
import { check, likeLiteral, pageOf, quotaText, userIdOfOwner } from './common.js';
import { consumedQuota, hourlyUsage, logPage, ownerNames, recentConsumption, type LogFilter, type LogRow, type NameMatch } from './store.js';

export type LogMethods = Pick<CustomerPort, 'logs' | 'logStat' | 'usage'>;

const MAX_SECONDS = 253_402_300_799; // 9999-12-31
const seconds = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= MAX_SECONDS;

/**
 * new-api's model_name filter (applyExplicitLogTextFilter): the name exactly, or with `%` a LIKE pattern of
 * at most two `%`, never two together, and at least 2 other characters; `_` and `!` are literal.
 */
function modelMatchOf(name: string): NameMatch {
  if (!name.includes('%')) return { exact: name };
  check(!name.includes('%%'), 'model_name may not hold two % together');
  check(name.split('%').length - 1 <= 2, 'model_name may hold at most two %');
  check(name.replaceAll('%', '').length >= 2, 'model_name needs at least 2 characters besides %');
  return { like: name.split('%').map(likeLiteral).join('%') };
}

type Filters = Omit<LogQuery, 'page' | 'size'>;

/** The store's filter of a query; null when it names a user the edge has never seen (nothing to read). */
async function filterOf(ctx: EdgeContext, q: Filters): Promise<LogFilter | null> {
  const f: LogFilter = { type: 0 };
  if (q.type !== undefined && q.type !== 0) {
    check(Number.isSafeInteger(q.type) && q.type >= 0, 'type must be a log type');
    f.type = q.type;
  }
  if (q.token_name) f.tokenName = String(q.token_name);
  if (q.model_name) f.model = modelMatchOf(String(q.model_name));
  for (const k of ['start_timestamp', 'end_timestamp'] as const) check(q[k] === undefined || seconds(q[k]), `${k} must be seconds since the epoch`);
  if (q.start_timestamp) f.fromMs = q.start_timestamp * 1000;
  if (q.end_timestamp) f.toMs = q.end_timestamp * 1000 + 999;
  if (q.userId !== undefined) {
    checkUserId(q.userId);
    const ownerId = await customerOwnerId(ctx.db, q.userId);
    if (ownerId === undefined) return null;
    f.ownerId = ownerId;
  }
  return f;
}

/** What a credit row says (new-api's texts for its top-up, manage and system rows). */
function creditContent(kind: string, amount: number, reason: string): string {
  const why = reason ? `：${reason}` : '';
  switch (kind) {
    case 'topup':
      return reason || `充值 ${quotaText(amount)}`;
    case 'adjust':
      return `管理员调整额度 ${amount < 0 ? '-' : '+'}${quotaText(Math.abs(amount))}${why}`;
    case 'signup':
      return `新用户注册赠送 ${quotaText(amount)}`;
    case 'import':
      return `从 new-api 导入额度 ${quotaText(amount)}${why}`;
    default:
      return `充值 ${quotaText(amount)}${why}`;
  }
}

function logView(r: LogRow, owners: Map<number, string>): CustomerLog {
  const isRun = r.type === LOG_TYPE.consume || r.type === LOG_TYPE.error;
  return {
    id: `${isRun ? 'run' : 'credit'}:${r.id}`,
    user_id: userIdOfOwner(owners.get(r.owner_id)),
    created_at: Math.floor(r.at_ms / 1000),
    type: r.type,
    content: isRun ? (r.type === LOG_TYPE.error ? r.note || r.kind : '') : creditContent(r.kind, r.quota, r.note),
    token_name: r.token_name,
    model_name: r.model_name,
    quota: r.quota,
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    // new-api's use_time: whole seconds, cut (not rounded).
    use_time: isRun ? Math.max(0, Math.floor((r.at_ms - r.started_ms) / 1000)) : 0,
    is_stream: r.stream === 1,
    token_id: r.token_id,
    request_id: r.request_id,
  };
}

/**
 * The usage log (new-api's /api/log/self and /api/log/): ended runs as consume rows (type 2; a failed or
 * cancelled call that cost nothing: an error row, type 5), and wallet credits as top-up (1), manage (3) and
 * system (4) rows, newest first; with its statistics and the hourly usage chart (/api/data/).
 */
export function logPart(ctx: EdgeContext): LogMethods {
  return {
    async logs(q) {
      const { limit, offset } = pageOf(q);
      const f = await filterOf(ctx, q);
      if (!f) return { items: [], total: 0 };
      const { rows, total } = await logPage(ctx.db, f, limit, offset);
      const owners = await ownerNames(ctx.db, rows.map((r) => r.owner_id));
      return { items: rows.map((r) => logView(r, owners)), total };
    },

    async logStat(q) {
      const f = await filterOf(ctx, { ...q, type: 0 });
      if (!f) return { quota: 0, rpm: 0, tpm: 0 };
      const recent = await recentConsumption(ctx.db, { ownerId: f.ownerId, tokenName: f.tokenName, model: f.model }, Date.now() - 60_000);
      return { quota: await consumedQuota(ctx.db, f), rpm: recent.calls, tpm: recent.tokens };
    },

    async usage(q) {
      check(seconds(q?.start_timestamp) && seconds(q.end_timestamp), 'start_timestamp and end_timestamp must be seconds since the epoch');
      check(q.end_timestamp >= q.start_timestamp, 'end_timestamp is before start_timestamp');
      const f = await filterOf(ctx, { userId: q.userId });
      if (!f) return [];
      const buckets = await hourlyUsage(ctx.db, { ownerId: f.ownerId, fromMs: q.start_timestamp * 1000, toMs: q.end_timestamp * 1000 + 999 });
      return buckets.map((b) => ({ user_id: q.userId ?? 0, model_name: b.model, created_at: b.hourMs / 1000, count: b.calls, quota: b.quota, token_used: b.tokens }));
    },
  };
}
