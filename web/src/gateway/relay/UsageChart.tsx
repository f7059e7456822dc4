import { useEffect, useMemo, useState } from 'preact/hooks';
import { ErrorBox, Select, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { useChannelNames } from './channel-names';
import { channelLabel, RANGES, type RelayFilters, type UsageBucket } from './format';
import { TimeChart } from './TimeChart';
import { formatAxis, formatMetric, METRIC_TEXT, METRICS, OTHERS, toSeries, totalsOf, type Metric, type Totals } from './usage-series';

type SplitBy = 'model' | 'channel' | 'caller';
interface Usage {
  buckets: UsageBucket[];
  bucketSeconds: number;
  until: number;
  /** Callers by name where the gateway knows them (edge owners). */
  callerNames: Record<string, string>;
}

function TotalsGrid({ totals }: { totals: Totals }) {
  return (
    <dl class="figures" aria-label={t('rl_totals')}>
      {METRICS.map((m) => (
        <div data-key={m}>
          <dt>{t(METRIC_TEXT[m])}</dt>
          <dd>{formatMetric(m, totals[m])}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Calls, errors, tokens or cost per time bucket of the page's range (GS05), one line per model or channel. */
export function UsageChart({ filters }: { filters: RelayFilters }) {
  const [metric, setMetric] = useState<Metric>('calls');
  const [by, setBy] = useState<SplitBy>('model');
  const [usage, setUsage] = useState<Usage | null>(null);
  const { busy, error, run } = useAction();
  useEffect(() => {
    const bucketSeconds = RANGES[filters.range].bucketSeconds;
    void run(async () => {
      const query = { start_time: filters.since, bucket_seconds: bucketSeconds, by, model: filters.model || undefined, channel_id: filters.channelId ? Number(filters.channelId) : undefined };
      const d = await api.call('GS05', { query });
      setUsage({ buckets: d.buckets, bucketSeconds, until: Date.now(), callerNames: d.caller_names });
    });
  }, [filters, by]);

  const series = useMemo(() => (usage ? toSeries(usage.buckets, metric, { since: filters.since, until: usage.until, bucketSeconds: usage.bucketSeconds }) : null), [usage, metric]);
  const names = useChannelNames(by === 'channel' ? (series?.lines ?? []).map((l) => (l.key && l.key !== OTHERS ? Number(l.key) : null)) : []);
  const labelOf = (key: string) => (key === OTHERS ? t('rl_others') : key === '' ? t('rl_unknown') : by === 'channel' ? channelLabel(Number(key), names) : by === 'caller' ? (usage?.callerNames[key] ?? key) : key);
  const labels = (series?.lines ?? []).map((l) => labelOf(l.key));
  const lines = useMemo(() => (series ? series.lines.map((l, i) => ({ label: labels[i], values: l.values })) : []), [series, labels.join('\u0000')]);
  const chartLabel = t('rl_chart_label', { metric: t(METRIC_TEXT[metric]), bucket: t(RANGES[filters.range].bucketText), by: t(`rl_by_${by}`) });

  return (
    <section class="card" aria-labelledby="relay-usage-title" aria-busy={busy}>
      <div class="row spread">
        <h2 id="relay-usage-title">{t('rl_usage')}</h2>
        <div class="row">
          <Select label={t('rl_metric')} name="metric" value={metric} onChange={(e) => setMetric(e.currentTarget.value as Metric)} options={METRICS.map((m) => [m, t(METRIC_TEXT[m])])} />
          <Select
            label={t('rl_by')}
            name="by"
            value={by}
            onChange={(e) => setBy(e.currentTarget.value as SplitBy)}
            options={[
              ['model', t('rl_by_model')],
              ['channel', t('rl_by_channel')],
              ['caller', t('rl_by_caller')],
            ]}
          />
        </div>
      </div>
      <ErrorBox error={error} />
      {usage && <TotalsGrid totals={totalsOf(usage.buckets)} />}
      {series && lines.length > 0 && <TimeChart times={series.times} lines={lines} label={chartLabel} axisValue={(v) => formatAxis(metric, v)} legendValue={(v) => formatMetric(metric, v)} />}
      {usage && lines.length === 0 && <p class="muted">{t('none')}</p>}
    </section>
  );
}
