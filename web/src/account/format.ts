// Money, counts and times as the customer pages show them. Wallet units are new-api's quota units:
// 500,000 units = 1 USD (src/contract/customer.ts).
import { lang } from '../shared/i18n';
import { pageSettings } from '../shared/ui';

export const UNITS_PER_USD = 500_000;

/** Units in USD with a dollar sign: two decimals from a cent up, up to six below it (1 unit = $0.000002). */
export function usd(units: number): string {
  const dollars = units / UNITS_PER_USD;
  const sign = dollars < 0 ? '-' : '';
  const abs = Math.abs(dollars);
  if (abs === 0) return '$0.00';
  if (abs >= 0.01) return `${sign}$${abs.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  return `${sign}$${abs.toFixed(6).replace(/0+$/, '')}`;
}

/** USD typed by a person (“12.5”) in whole units; NaN when it is not a number. */
export function unitsOf(dollars: string): number {
  const n = Number(dollars.trim());
  return dollars.trim() === '' || !Number.isFinite(n) ? NaN : Math.round(n * UNITS_PER_USD);
}

/** Units as they are, with separators (the hover text of an amount). */
export function unitCount(units: number): string {
  return units.toLocaleString('en');
}

export function count(n: number): string {
  return n.toLocaleString(lang.value === 'zh' ? 'zh-CN' : 'en');
}

/** A price in USD with up to four significant decimals (prices per 1M tokens: $2.50, $0.075). */
export function price(dollars: number): string {
  if (dollars === 0) return '$0';
  if (dollars >= 1) return `$${Number(dollars.toFixed(4))}`;
  return `$${Number(dollars.toPrecision(4))}`;
}

/** A value for <input type="datetime-local"> from seconds since the epoch, in the browser's time zone. */
export function localInput(seconds: number): string {
  const d = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Seconds since the epoch from a datetime-local value; undefined when empty or not a time. */
export function secondsOf(local: string): number | undefined {
  if (!local) return undefined;
  const ms = new Date(local).getTime();
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The start of the local day of `seconds`. */
export function dayStart(seconds: number): number {
  const d = new Date(seconds * 1000);
  d.setHours(0, 0, 0, 0);
  return Math.floor(d.getTime() / 1000);
}

/** Saves `text` as a file the browser downloads. */
export function download(filename: string, text: string, type = 'text/plain') {
  const url = URL.createObjectURL(new Blob([text], { type: `${type};charset=utf-8` }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** One CSV line (RFC 4180 quoting; a leading = + - @ is prefixed so a spreadsheet does not run it). */
export function csvLine(values: Array<string | number | boolean>): string {
  return values
    .map((v) => {
      let s = String(v);
      if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
      return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    })
    .join(',');
}

interface EdgeSettings {
  edge_url: string;
  edge_anthropic: boolean;
}
const settings = pageSettings<EdgeSettings>();

/** Where customers reach the edge (EDGE_PUBLIC_URL, else this page's origin), without /v1. */
export const edgeUrl = (settings.edge_url || location.origin).replace(/\/+$/, '');
/** Whether the edge serves Anthropic's Messages API (Claude Code, the Anthropic SDKs). */
export const edgeAnthropic = settings.edge_anthropic === true;
