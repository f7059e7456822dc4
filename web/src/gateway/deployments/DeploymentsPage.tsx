import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, Select, formatTime, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Figures, Pager, Panel, RecordsTable, StatusBadge } from '../widgets';
import { CreateDeployment } from './CreateDeployment';
import { DeploymentDetails } from './DeploymentDetails';
import { ExtendDeployment, RenameDeployment } from './DeploymentDialogs';

const STATUSES = ['running', 'completed', 'failed', 'deployment requested', 'termination requested', 'destroyed'];
const PAGE_SIZE = 10;
type Dialog = { kind: 'create' } | { kind: 'rename' | 'extend' | 'details'; row: any } | null;

/** io.net deployments: provider status (G57), list and search (G41/G56), details, create, rename, extend, delete. */
export function DeploymentsPage() {
  const [settings, setSettings] = useState<any>(null);
  const [status, setStatus] = useState('');
  const [keyword, setKeyword] = useState('');
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(1);
  const [data, setData] = useState<any>(null);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const load = () =>
    run(async () => {
      const q = { status: status || undefined, p: page, page_size: PAGE_SIZE };
      setData(query ? await api.call('G56', { query: { ...q, keyword: query } }) : await api.call('G41', { query: q }));
    });
  useEffect(() => void run(async () => setSettings(await api.call('G57'))), []);
  const ready = settings?.enabled && settings?.configured;
  useEffect(() => void (ready && load()), [ready, status, query, page]);
  const done = (message: string) => {
    setDialog(null);
    setNotice(message);
    void load();
  };
  const remove = (row: any) =>
    confirm(t('dep_confirm_delete', { name: row.deployment_name })) &&
    run(async () => {
      await api.call('G43', { params: { id: row.id } });
      done(t('dep_deleted', { name: row.deployment_name }));
    });
  return (
    <>
      <Panel
        id="dep-title"
        title={t('deployments')}
        actions={
          ready && (
            <button type="button" onClick={() => setDialog({ kind: 'create' })}>
              {t('dep_new')}
            </button>
          )
        }
      >
        {settings && <Figures data={settings} keys={['provider', 'enabled', 'configured', 'can_connect', 'hardware_count', 'total_available']} />}
        {settings && !ready && <p class="notice info" role="status" data-testid="deployments-off">
            {t('dep_off')}
          </p>}
        {ready && (
          <form class="row" role="search" onSubmit={(e) => (e.preventDefault(), setPage(1), setQuery(keyword.trim()))}>
            <Field label={t('dep_keyword')} type="search" value={keyword} onInput={(e) => setKeyword(e.currentTarget.value)} />
            <Select label={t('status')} value={status} onChange={(e) => (setStatus(e.currentTarget.value), setPage(1))} options={[['', t('any')], ...STATUSES.map((s) => [s, t(`s_${s}`)] as [string, string])]} />
            <button type="submit">{t('search')}</button>
          </form>
        )}
      </Panel>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      {data && (
        <section class="card" aria-label={t('deployments')} aria-busy={busy}>
          <RecordsTable
            rows={data.items}
            rowKey="id"
            columns={[
              { key: 'deployment_name', label: t('name') },
              { key: 'id', label: t('id') },
              { key: 'status', label: t('status'), render: (d) => <StatusBadge status={d.status} /> },
              { key: 'hardware_info' },
              { key: 'time_remaining', render: (d) => d.time_remaining || t('dep_minutes', { n: d.compute_minutes_remaining }) },
              { key: 'created_at', render: (d) => formatTime(d.created_at) },
              {
                key: 'actions',
                label: t('actions'),
                render: (d) => (
                  <div class="row">
                    <button type="button" class="link" onClick={() => setDialog({ kind: 'details', row: d })}>
                      {t('dep_details')}
                    </button>
                    <button type="button" class="link" onClick={() => setDialog({ kind: 'rename', row: d })}>
                      {t('dep_rename')}
                    </button>
                    <button type="button" class="link" onClick={() => setDialog({ kind: 'extend', row: d })}>
                      {t('dep_extend')}
                    </button>
                    <button type="button" class="link" onClick={() => remove(d)}>
                      {t('delete')}
                    </button>
                  </div>
                ),
              },
            ]}
          />
          <Pager page={page} total={data.total} pageSize={PAGE_SIZE} label={t('deployments')} onPage={setPage} />
        </section>
      )}
      {dialog?.kind === 'create' && <CreateDeployment onClose={() => setDialog(null)} onDone={done} />}
      {dialog?.kind === 'rename' && <RenameDeployment row={dialog.row} onClose={() => setDialog(null)} onDone={done} />}
      {dialog?.kind === 'details' && <DeploymentDetails id={dialog.row.id} onClose={() => setDialog(null)} onChanged={() => void load()} />}
      {dialog?.kind === 'extend' && <ExtendDeployment row={dialog.row} onClose={() => setDialog(null)} onDone={done} />}
    </>
  );
}
