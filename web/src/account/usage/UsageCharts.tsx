// The usage overview of a range: totals, a uPlot chart of cost, tokens or calls per day by model, and tables
// of the totals by model (and, for admins, by user) with a bar for each row's share.
import { useMemo, useState } from 'preact/hooks';
import { Select } from '../../shared/ui';
import { TimeChart } from '../../shared/TimeChart';
import type { UsageBucket } from '../../generated/account-api';
import { count, UNITS_PER_USD, usd } from '../format';
import { t } from '../texts';
import { Money, TableBox } from '../widgets';
import { dailyByModel, grandTotal, METRICS, OTHERS, totalsBy, type Metric, type Total } from './usage-data';

function formatMetric(m: Metric, v: number) {
  return m === 'cost' ? usd(Math.round(v * UNITS_PER_USD)) : count(Math.round(v));
}

function TotalsTable(props: { title: string; rows: Total[]; keyLabel: string; testid: string; limit?: number }) {
  const rows = props.rows.slice(0, props.limit ?? 10);
  const top = Math.max(1, ...rows.map((r) => r.quota));
  return (
    <TableBox label={props.title}>
      <table class="totals" data-testid={props.testid}>
        <caption>{props.title}</caption>
        <thead>
          <tr>
            <th scope="col">{props.keyLabel}</th>
            <th scope="col">{t('u_calls')}</th>
            <th scope="col">{t('u_tokens')}</th>
            <th scope="col">{t('u_cost')}</th>
            <th scope="col" class="share-col">
              <span class="sr-only">{t('u_share')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr data-key={r.key}>
              <td>{r.key}</td>
              <td class="num">{count(r.calls)}</td>
              <td class="num">{count(r.tokens)}</td>
              <td class="num">
                <Money units={r.quota} />
              </td>
              <td class="share-col" aria-hidden="true">
                <span class="share" style={{ width: `${Math.round((r.quota / top) * 100)}%` }} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

export function UsageCharts(props: { buckets: UsageBucket[]; since: number; until: number; byUser?: boolean }) {
  const [metric, setMetric] = useState<Metric>('cost');
  const series = useMemo(() => dailyByModel(props.buckets, metric, props.since, props.until), [props.buckets, metric, props.since, props.until]);
  const lines = useMemo(() => series.lines.map((l) => ({ label: l.key === OTHERS ? t('u_others') : l.key, values: l.values })), [series]);
  const total = grandTotal(props.buckets);
  return (
    <>
      <dl class="figures" aria-label={t('u_totals')}>
        <div data-key="calls">
          <dt>{t('u_calls')}</dt>
          <dd>{count(total.calls)}</dd>
        </div>
        <div data-key="tokens">
          <dt>{t('u_tokens')}</dt>
          <dd>{count(total.tokens)}</dd>
        </div>
        <div data-key="cost">
          <dt>{props.byUser ? t('u_revenue') : t('u_cost')}</dt>
          <dd>
            <Money units={total.quota} testid="total-cost" />
          </dd>
        </div>
      </dl>
      {props.buckets.length === 0 ? (
        <p class="muted">{t('u_no_usage')}</p>
      ) : (
        <>
          <div class="row spread">
            <h3>{t('u_by_day')}</h3>
            <Select label={t('u_metric')} name="metric" value={metric} onChange={(e) => setMetric(e.currentTarget.value as Metric)} options={METRICS.map((m) => [m, t(`u_metric_${m}`)])} />
          </div>
          <TimeChart daily times={series.times} lines={lines} label={t('u_chart_label', { metric: t(`u_metric_${metric}`) })} timeLabel={t('u_day')} axisValue={(v) => formatMetric(metric, v)} legendValue={(v) => formatMetric(metric, v)} />
          <div class={props.byUser ? 'split' : ''}>
            <TotalsTable title={t('u_by_model')} rows={totalsBy(props.buckets, 'model_name')} keyLabel={t('u_model')} testid="by-model" />
            {props.byUser && <TotalsTable title={t('u_top_users')} rows={totalsBy(props.buckets, 'username')} keyLabel={t('u_user')} testid="by-user" />}
          </div>
        </>
      )}
    </>
  );
}
