import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Pager } from '../widgets';
import { useChannelNames } from './channel-names';
import { freshFilters, type RelayCall, type RelayFilters } from './format';
import { RelayFilterForm } from './RelayFilterForm';
import { RelayLogTable } from './RelayLogTable';
import { UsageChart } from './UsageChart';

const PAGE_SIZE = 20;

interface LogPage {
  items: RelayCall[];
  total: number;
}

/** The relay's calls for staff: a usage chart over the chosen range, then the log (GS04), newest first. */
export function RelayPage() {
  const [filters, setFilters] = useState<RelayFilters>(() => freshFilters());
  const [page, setPage] = useState(1);
  const [log, setLog] = useState<LogPage | null>(null);
  const { busy, error, run } = useAction();
  useEffect(() => {
    void run(async () => {
      const query = {
        p: page,
        page_size: PAGE_SIZE,
        model: filters.model || undefined,
        channel_id: filters.channelId ? Number(filters.channelId) : undefined,
        status: filters.status || undefined,
        caller: filters.caller || undefined,
        start_time: filters.since,
      };
      setLog(await api.call('GS04', { query }));
    });
  }, [filters, page]);
  const calls = log?.items ?? [];
  const names = useChannelNames(calls.flatMap((c) => [c.channel_id, ...c.attempts.map((a) => a.channel_id)]));
  const apply = (next: RelayFilters) => {
    setPage(1);
    setFilters(next);
  };
  return (
    <>
      <h2 class="page-title">{t('rl_title')}</h2>
      <section class="card" aria-label={t('rl_filters')}>
        <RelayFilterForm applied={filters} busy={busy} onApply={apply} />
      </section>
      <UsageChart filters={filters} />
      <section class="card" aria-labelledby="relay-log-title">
        <h2 id="relay-log-title">{t('rl_log')}</h2>
        <ErrorBox error={error} />
        <RelayLogTable calls={calls} names={names} busy={busy} />
        {log && calls.length === 0 && <p class="muted">{t('none')}</p>}
        <Pager page={page} total={log?.total ?? 0} pageSize={PAGE_SIZE} label={t('rl_log')} onPage={setPage} />
      </section>
    </>
  );
}
