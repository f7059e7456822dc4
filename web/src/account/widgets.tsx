// Small pieces the customer and admin pages share: an amount in USD with its units on hover, a pager, a
// table box that scrolls sideways on a phone, and the log's row types.
import type { ComponentChildren } from 'preact';
import { t } from './texts';
import { unitCount, usd } from './format';

/** An amount of wallet units shown in USD; the units in the tooltip (and to screen readers after the amount). */
export function Money({ units, testid }: { units: number; testid?: string }) {
  return (
    <span class="money" title={t('units_n', { n: unitCount(units) })} data-units={units} data-testid={testid}>
      {usd(units)}
    </span>
  );
}

export function Pager(props: { page: number; size: number; total: number; busy?: boolean; onPage: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(props.total / props.size));
  return (
    <div class="pager">
      <button type="button" class="secondary" disabled={props.busy || props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        {t('prev')}
      </button>
      <span aria-live="polite" data-testid="page-info">
        {t('page_of', { page: props.page, pages, total: props.total })}
      </span>
      <button type="button" class="secondary" disabled={props.busy || props.page >= pages} onClick={() => props.onPage(props.page + 1)}>
        {t('next')}
      </button>
    </div>
  );
}

/** A table that scrolls inside its own box on a narrow screen (the page keeps its width). */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

/** new-api's log types (src/contract/customer.ts LOG_TYPE). */
export const LOG_TYPES = [1, 2, 3, 4, 5] as const;
export const logTypeName = (type: number) => ((LOG_TYPES as readonly number[]).includes(type) ? t(`log_type_${type}`) : String(type));
