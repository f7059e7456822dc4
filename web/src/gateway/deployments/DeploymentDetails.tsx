import { useEffect, useState } from 'preact/hooks';
import { Dialog, ErrorBox, Field, Notice, Select, formatTime, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Figures, RecordsTable, StatusBadge } from '../widgets';
import { UpdateDeployment } from './UpdateDeployment';

type Props = { id: string; onClose: () => void; onChanged: () => void };
const DETAIL_KEYS = ['status', 'model_name', 'hardware_name', 'gpus_per_container', 'total_gpus', 'total_containers', 'compute_minutes_remaining', 'amount_paid'];

/** One deployment: its detail (G44), containers (G46) with their events (G47) and logs (G49), and updates (G45). */
export function DeploymentDetails({ id, onClose, onChanged }: Props) {
  const [detail, setDetail] = useState<any>(null);
  const [containers, setContainers] = useState<any[] | null>(null);
  const [events, setEvents] = useState<any>(null);
  const [logsOf, setLogsOf] = useState('');
  const [notice, setNotice] = useState('');
  const { error, run } = useAction();
  const load = () =>
    run(async () => {
      const [d, c] = await Promise.all([api.call('G44', { params: { id } }), api.call('G46', { params: { id } })]);
      setDetail(d);
      setContainers(c.containers);
    });
  useEffect(() => void load(), [id]);
  const showEvents = (containerId: string) => run(async () => setEvents(await api.call('G47', { params: { id, container_id: containerId } })));
  const updated = (message: string) => {
    setNotice(message);
    onChanged();
    void load();
  };
  return (
    <Dialog wide title={t('dep_details_title', { name: detail?.deployment_name ?? id })} onClose={onClose}>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      {detail && <Figures data={detail} keys={DETAIL_KEYS} label={t('dep_details')} />}
      {containers && (
        <RecordsTable
          caption={t('dep_containers')}
          rows={containers}
          rowKey="container_id"
          columns={[
            { key: 'container_id', label: t('id') },
            { key: 'device_id' },
            { key: 'status', label: t('status'), render: (c) => <StatusBadge status={c.status} /> },
            { key: 'uptime_percent', render: (c) => `${c.uptime_percent}%` },
            { key: 'public_url' },
            {
              key: 'actions',
              label: t('actions'),
              render: (c) => (
                <div class="row">
                  <button type="button" class="link" onClick={() => showEvents(c.container_id)}>
                    {t('dep_events')}
                  </button>
                  <button type="button" class="link" onClick={() => setLogsOf(c.container_id)}>
                    {t('dep_logs')}
                  </button>
                </div>
              ),
            },
          ]}
        />
      )}
      {events && <RecordsTable caption={t('dep_events_of', { id: events.container_id })} rows={events.events} columns={[{ key: 'time', time: true, label: t('dep_time') }, { key: 'message', label: t('dep_message') }]} />}
      {logsOf && <ContainerLogs id={id} containerId={logsOf} />}
      {detail && <UpdateDeployment id={id} current={detail} onDone={updated} />}
      <div class="row">
        <button type="button" class="secondary" onClick={onClose}>
          {t('close')}
        </button>
      </div>
    </Dialog>
  );
}

const STREAMS: Array<[string, string]> = [
  ['', '—'],
  ['stdout', 'stdout'],
  ['stderr', 'stderr'],
];

/** G49 without follow: the last lines of one container's log, filtered by stream. */
function ContainerLogs({ id, containerId }: { id: string; containerId: string }) {
  const [stream, setStream] = useState('');
  const [limit, setLimit] = useState('100');
  const [lines, setLines] = useState<string[] | null>(null);
  const [at, setAt] = useState(0);
  const { busy, error, run } = useAction();
  const load = () =>
    run(async () => {
      const r = await api.call('G49', { params: { id }, query: { container_id: containerId, stream: stream || undefined, limit: Number(limit) || 100 } });
      setLines(r.logs.map((l: any) => l.message));
      setAt(Math.floor(Date.now() / 1000));
    });
  useEffect(() => void load(), [containerId, stream]);
  return (
    <section aria-label={t('dep_logs_of', { id: containerId })}>
      <h3>{t('dep_logs_of', { id: containerId })}</h3>
      <form class="row" onSubmit={(e) => (e.preventDefault(), load())}>
        <Select label={t('dep_stream')} value={stream} onChange={(e) => setStream(e.currentTarget.value)} options={STREAMS} />
        <Field label={t('dep_lines')} type="number" min={1} max={1000} value={limit} onInput={(e) => setLimit(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {t('dep_reload_logs')}
        </button>
      </form>
      <ErrorBox error={error} />
      {lines && (lines.length ? <pre class="logs">{lines.join('\n')}</pre> : <p class="muted">{t('none')}</p>)}
      {at > 0 && <p class="muted">{t('dep_logs_at', { time: formatTime(at) })}</p>}
    </section>
  );
}
