// Every user's usage for admins: an overview of the last 7 or 30 days (AS16: calls, tokens and revenue by
// day, top models, top users), optionally of one user, above every user's call log (AS14) with a user filter.
// The Users page links here with ?username=.
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Select, useAction } from '../../shared/ui';
import type { UsageBucket } from '../../generated/account-api';
import { api } from '../session';
import { t } from '../texts';
import { CallLog } from '../usage/CallLog';
import { UsageCharts } from '../usage/UsageCharts';
import { RANGES, rangeOf, type Range } from '../usage/UsagePage';

export function AdminUsagePage({ query }: { query: URLSearchParams }) {
  const initialUser = query.get('username') ?? '';
  const [range, setRange] = useState<Range>('7');
  const [draftUser, setDraftUser] = useState(initialUser);
  const [username, setUsername] = useState(initialUser);
  const [data, setData] = useState<{ buckets: UsageBucket[]; since: number; until: number } | null>(null);
  const [models, setModels] = useState<string[]>([]);
  const { error, run } = useAction();
  useEffect(() => {
    const { since, until } = rangeOf(range);
    void run(async () => {
      const buckets = await api.call('AS16', { query: { start_timestamp: since, end_timestamp: until, username: username || undefined } });
      setData({ buckets, since, until });
      setModels([...new Set(buckets.map((b) => b.model_name))]);
    });
  }, [range, username]);
  return (
    <>
      <section class="card" aria-labelledby="admin-usage-title">
        <h2 id="admin-usage-title">{t('au_usage_title')}</h2>
        <form class="row" role="search" onSubmit={(e) => (e.preventDefault(), setUsername(draftUser.trim()))}>
          <Field label={t('u_user')} name="overview-user" maxLength={64} value={draftUser} hint={t('au_usage_user_hint')} onInput={(e) => setDraftUser(e.currentTarget.value)} />
          <Select label={t('u_range')} name="range" value={range} onChange={(e) => setRange(e.currentTarget.value as Range)} options={RANGES.map((r) => [r, t('u_last_days', { n: r })])} />
          <button type="submit" class="secondary">
            {t('u_apply')}
          </button>
        </form>
        <ErrorBox error={error} />
        {data && <UsageCharts buckets={data.buckets} since={data.since} until={data.until} byUser />}
      </section>
      <CallLog key={username} admin models={models} initial={{ username }} />
    </>
  );
}
