import { CustomerRefusal, customerUserIdOf, type PageQuery } from '../../../contract/customer.js';

/** new-api's quota units per USD. */
export const UNITS_PER_USD = 500_000;
/** The largest amount a code may carry (new-api's token limit: 1e9 USD), as a wallet grant. */
export const MAX_UNITS = 1_000_000_000 * UNITS_PER_USD;
const PAGE_SIZE_MAX = 100;

/** A page as new-api reads `p` and `page_size`: from 1, 10 by default, at most 100. */
export function pageOf(p: PageQuery) {
  const page = Number.isSafeInteger(p?.page) && p.page >= 1 ? p.page : 1;
  const size = Number.isSafeInteger(p?.size) && p.size >= 1 ? Math.min(p.size, PAGE_SIZE_MAX) : 10;
  return { offset: (page - 1) * size, limit: size };
}

export function check(ok: boolean, detail: string) {
  if (!ok) throw new CustomerRefusal('invalid', detail);
}

/** The account user id of an owner name; 0 for an owner made with the CLI or the console. */
export const userIdOfOwner = (name: string | null | undefined) => (name ? (customerUserIdOf(name) ?? 0) : 0);

/** An amount as new-api's log text shows it (logger.LogQuota, USD display): `＄0.002000 额度`. */
export const quotaText = (units: number) => `＄${(units / UNITS_PER_USD).toFixed(6)} 额度`;

/** LIKE's own characters taken literally, for a pattern whose escape character is `!` (MySQL's default, the backslash, reads differently). */
export const likeLiteral = (text: string) => text.replace(/[!%_]/g, (c) => `!${c}`);
