import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Notice, Select, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Figures, Pager, Panel, RecordsTable, StatusBadge } from '../widgets';

/** G77 runtime status with the plugins table; each plugin is switched with G72 (root). */
export function PluginsPanel() {
  const [data, setData] = useState<any>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const load = () => run(async () => setData(await api.call('G77')));
  const toggle = (key: string, enabled: boolean) =>
    run(async () => {
      setNotice('');
      const r = await api.call('G72', { params: { key }, body: { enabled } });
      setNotice(t(r?.plugin_enabled ?? enabled ? 'plugin_on' : 'plugin_off', { key }));
      setData(await api.call('G77'));
    });
  return (
    <Panel id="ops-plugins" title={t('ops_plugins')} actions={<button type="button" class="secondary" disabled={busy} onClick={load}>{t('load')}</button>}>
      <ErrorBox error={error} />
      {notice && <Notice>{notice}</Notice>}
      {data && (
        <>
          <Figures data={{ ...data, last_rebuild: data.last_rebuild?.status, pending: data.pending?.length ?? 0 }} keys={['current_generation', 'last_rebuild', 'restart_required', 'pending']} />
          <RecordsTable
            rows={data.plugins}
            rowKey="key"
            columns={[
              { key: 'key' },
              { key: 'version' },
              { key: 'layer' },
              { key: 'enabled', render: (p) => <StatusBadge status={p.enabled ? 'enabled' : 'disabled'} /> },
              { key: 'runtime_status', render: (p) => <StatusBadge status={p.runtime_status} /> },
              { key: 'route_count' },
              { key: 'channel_count' },
              { key: 'in_flight_count' },
              {
                key: 'actions',
                label: t('actions'),
                render: (p) => (
                  <button type="button" class="link" disabled={busy} onClick={() => toggle(p.key, !p.enabled)}>
                    {p.enabled ? t('disable') : t('enable')}
                  </button>
                ),
              },
            ]}
          />
        </>
      )}
    </Panel>
  );
}

const PAGE_SIZE = 10;

/** GS03: tasks created through task plugins, newest first, with a status filter and paging. */
export function TasksPanel() {
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);
  const [data, setData] = useState<any>(null);
  const [shown, setShown] = useState(false);
  const { busy, error, run } = useAction();
  useEffect(() => {
    if (shown) void run(async () => setData(await api.call('GS03', { query: { p: page, page_size: PAGE_SIZE, status: (status || undefined) as any } })));
  }, [shown, status, page]);
  return (
    <Panel id="ops-tasks" title={t('ops_tasks')} actions={<button type="button" class="secondary" disabled={busy} onClick={() => (setShown(true), setData(null), setPage(1))}>{t('load')}</button>}>
      <ErrorBox error={error} />
      {shown && (
        <Select
          label={t('status')}
          name="task_status"
          value={status}
          onChange={(e) => (setStatus(e.currentTarget.value), setPage(1))}
          options={[['', t('any')], ...['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((s) => [s, t(`s_${s}`)] as [string, string])]}
        />
      )}
      {data && (
        <>
          <RecordsTable
            rows={data.items}
            rowKey="task_id"
            columns={[
              { key: 'task_id', render: (r) => <code class="mono">{r.task_id}</code> },
              { key: 'plugin', render: (r) => `${r.plugin} ${r.version}` },
              { key: 'status', label: t('status'), render: (r) => <StatusBadge status={r.status} /> },
              { key: 'owner' },
              { key: 'created_at', time: true },
              { key: 'updated_at', time: true },
              { key: 'error' },
            ]}
          />
          <Pager page={page} total={data.total} pageSize={PAGE_SIZE} label={t('ops_tasks')} onPage={setPage} />
        </>
      )}
    </Panel>
  );
}
