import { AppError } from '../../../kit/http/errors.js';
import type { CustomerLog, LogQuery, UsageBucket } from '../../../contract/customer.js';
import { pageAnswer, pageOf, type PagingInput } from '../paging.js';
import type { EdgeAccess } from '../edge.js';

/** new-api's longest span of a user's own usage chart: 30 days (GetUserQuotaDates). */
export const SELF_USAGE_SPAN_SECONDS = 2_592_000;

/** The filters of new-api's log routes (`group`, `request_id` and `channel` are not kept here). */
export interface LogFilters {
  type?: number;
  token_name?: string;
  model_name?: string;
  start_timestamp?: number;
  end_timestamp?: number;
}

export interface UsageRange {
  start_timestamp?: number;
  end_timestamp?: number;
}

/** What usage needs of the account's users: the names the rows show, and the id an admin's filter names. */
export interface UserNames {
  usernamesOf(ids: number[]): Promise<Map<number, string>>;
  idOfUsername(username: string): Promise<number | null>;
}

const invalid = (detail: string) => new AppError('CUSTOMER_INVALID', { params: { detail } });
const nowSeconds = () => Math.floor(Date.now() / 1000);

function filtersOf(f: LogFilters): Omit<LogQuery, 'page' | 'size'> {
  const q: Omit<LogQuery, 'page' | 'size'> = {};
  if (f.type) q.type = f.type;
  if (f.token_name) q.token_name = f.token_name;
  if (f.model_name) q.model_name = f.model_name;
  if (f.start_timestamp) q.start_timestamp = f.start_timestamp;
  if (f.end_timestamp) q.end_timestamp = f.end_timestamp;
  if (q.start_timestamp && q.end_timestamp && q.end_timestamp < q.start_timestamp) throw invalid('end_timestamp is before start_timestamp');
  return q;
}

/** The chart's range: absent ends are now and 30 days before the end. */
function rangeOf(r: UsageRange, maxSpan?: number) {
  const end = r.end_timestamp || nowSeconds();
  const start = r.start_timestamp || Math.max(0, end - SELF_USAGE_SPAN_SECONDS);
  if (end < start) throw invalid('end_timestamp is before start_timestamp');
  if (maxSpan !== undefined && end - start > maxSpan) throw invalid('the time span must be at most one month');
  return { start_timestamp: start, end_timestamp: end };
}

/**
 * Usage logs, their statistics and the hourly usage chart (new-api's log and data controllers): the caller's
 * own (`userId` from the authenticated identity) or, for admins, every user's.
 */
export function createUsageService(edge: EdgeAccess, users: UserNames) {
  async function withNames<T extends { user_id: number }>(rows: T[]): Promise<(T & { username: string })[]> {
    const names = await users.usernamesOf(rows.map((r) => r.user_id));
    return rows.map((r) => ({ ...r, username: names.get(r.user_id) ?? '' }));
  }

  const logView = (row: CustomerLog & { username: string }) => ({ ...row, other: '' });

  async function logPage(userId: number | undefined, q: PagingInput & LogFilters) {
    const page = pageOf(q);
    const result = await edge.run((port) => port.logs({ ...filtersOf(q), ...(userId === undefined ? {} : { userId }), ...page }));
    return pageAnswer(page, { items: (await withNames(result.items)).map(logView), total: result.total });
  }

  /** An admin's username filter as a user id: undefined when absent, null when no such user. */
  async function userFilter(username?: string): Promise<number | null | undefined> {
    const name = username?.trim();
    return name ? users.idOfUsername(name) : undefined;
  }

  async function usagePage(userId: number | undefined, range: { start_timestamp: number; end_timestamp: number }): Promise<(UsageBucket & { username: string })[]> {
    return withNames(await edge.run((port) => port.usage({ ...range, ...(userId === undefined ? {} : { userId }) })));
  }

  return {
    selfLogs: (userId: number, q: PagingInput & LogFilters) => logPage(userId, q),

    async allLogs(q: PagingInput & LogFilters & { username?: string }) {
      const userId = await userFilter(q.username);
      if (userId === null) return pageAnswer(pageOf(q), { items: [], total: 0 });
      return logPage(userId, q);
    },

    selfStat: (userId: number, q: LogFilters) => edge.run((port) => port.logStat({ ...filtersOf(q), userId })),

    async allStat(q: LogFilters & { username?: string }) {
      const userId = await userFilter(q.username);
      if (userId === null) return { quota: 0, rpm: 0, tpm: 0 };
      return edge.run((port) => port.logStat({ ...filtersOf(q), ...(userId === undefined ? {} : { userId }) }));
    },

    selfUsage: (userId: number, r: UsageRange) => usagePage(userId, rangeOf(r, SELF_USAGE_SPAN_SECONDS)),

    async allUsage(r: UsageRange & { username?: string }) {
      const range = rangeOf(r);
      const userId = await userFilter(r.username);
      return userId === null ? [] : usagePage(userId, range);
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
