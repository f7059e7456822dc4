// The customer's usage: an overview of the last 7 or 30 days (AP13: cost, tokens and calls by day and by
// model) above the call log (AP10) with its filters, paging and CSV export.
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Select, useAction } from '../../shared/ui';
import type { UsageBucket } from '../../generated/account-api';
import { api } from '../session';
import { nowSeconds } from '../format';
import { t } from '../texts';
import { CallLog } from './CallLog';
import { UsageCharts } from './UsageCharts';

export const RANGES = ['7', '30'] as const;
export type Range = (typeof RANGES)[number];

/** The chart's time range: the last `days` days up to now, from the start of the first day. */
export function rangeOf(days: Range) {
  const until = nowSeconds();
  const start = new Date((until - (Number(days) - 1) * 86400) * 1000);
  start.setHours(0, 0, 0, 0);
  return { since: Math.floor(start.getTime() / 1000), until };
}

export function UsagePage() {
  const [range, setRange] = useState<Range>('7');
  const [data, setData] = useState<{ buckets: UsageBucket[]; since: number; until: number } | null>(null);
  const [models, setModels] = useState<string[]>([]);
  const [keys, setKeys] = useState<string[]>([]);
  const { error, run } = useAction();
  useEffect(() => {
    const { since, until } = rangeOf(range);
    void run(async () => setData({ buckets: await api.call('AP13', { query: { start_timestamp: since, end_timestamp: until } }), since, until }));
  }, [range]);
  useEffect(() => {
    void api.call('AP29').then(setModels, () => {});
    void api.call('AP01', { query: { p: 1, page_size: 100 } }).then((d) => setKeys(d.items.map((k) => k.name)), () => {});
  }, []);
  return (
    <>
      <section class="card" aria-labelledby="usage-title">
        <div class="row spread">
          <h2 id="usage-title">{t('usage')}</h2>
          <Select label={t('u_range')} name="range" value={range} onChange={(e) => setRange(e.currentTarget.value as Range)} options={RANGES.map((r) => [r, t('u_last_days', { n: r })])} />
        </div>
        <ErrorBox error={error} />
        {data && <UsageCharts buckets={data.buckets} since={data.since} until={data.until} />}
      </section>
      <CallLog models={models} keys={keys} />
    </>
  );
}
