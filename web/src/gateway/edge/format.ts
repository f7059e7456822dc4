import { QUOTA_PER_USD } from '../../generated/gateway-api';

/** Wallet units (the gateway's quota units, 500,000 = 1 USD) in USD, to six decimals without trailing zeros (1 unit = $0.000002). */
export function usd(units: number): string {
  return (units / QUOTA_PER_USD).toFixed(6).replace(/\.?0+$/, '');
}

/** An integer with thousands separators. */
export function units(n: number): string {
  return n.toLocaleString('en');
}

export const OWNER_PATTERN = '[A-Za-z0-9._\\-]{1,64}';
