import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../shared/api';
import { ErrorBox, formatTime, useAction, useConfirm, type ConfirmOptions } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Figures, Panel, RecordsTable, StatusBadge, type Column } from '../widgets';
import { ChannelFailures } from '../channels/Failures';

export interface Job {
  task_id: string;
  type: string;
  status: string;
  progress?: Record<string, number>;
  result?: any;
  error?: string | null;
  created_by?: string;
  created_at?: number;
  finished_at?: number | null;
}

const POLL_MS = 1000;
/** Result tables per job type: which array of the result to list and with which columns. */
/** (Test and balance failures are listed by ChannelFailures, with the channels' names.) */
const TABLES: Record<string, Array<{ key: string; caption: string; columns: Column[] }>> = {
  model_update: [
    { key: 'channel_detected_results', caption: 'detected', columns: [{ key: 'channel_id' }, { key: 'channel_name' }, { key: 'add_models' }, { key: 'remove_models' }, { key: 'auto_added_models' }] },
    { key: 'failures', caption: 'failures', columns: [{ key: 'channel_id' }, { key: 'channel_name' }, { key: 'code' }, { key: 'message' }] },
  ],
};

/**
 * A background job (G33 tests, G35 balances, G40 model-update detection): starts it, then follows it through
 * GS02 while it runs, with a progress bar, its counters and its result tables. A job of the same type that is
 * already running (409 JOB_RUNNING) is followed instead.
 */
export function JobPanel({ id, title, hint, start, confirm }: { id: string; title: string; hint: string; start: () => Promise<Job>; confirm?: ConfirmOptions }) {
  const [job, setJob] = useState<Job | null>(null);
  const { busy, error, run } = useAction();
  const ask = useConfirm();
  const begin = async () =>
    (!confirm || (await ask.ask(confirm))) &&
    run(async () => {
      try {
        setJob(await start());
      } catch (e) {
        if (e instanceof ApiError && e.code === 'JOB_RUNNING' && (e.data as Job | undefined)?.task_id) setJob(e.data as Job);
        else throw e;
      }
    });
  const refresh = (j: Job) => run(async () => setJob(await api.call('GS02', { params: { task_id: j.task_id } })));
  useEffect(() => {
    if (job?.status !== 'running') return;
    const timer = setTimeout(() => void refresh(job), POLL_MS);
    return () => clearTimeout(timer);
  }, [job]);
  const running = job?.status === 'running';
  return (
    <Panel
      id={id}
      title={title}
      hint={hint}
      actions={
        <button type="button" disabled={busy || running} onClick={begin}>
          {t('start')}
        </button>
      }
    >
      <ErrorBox error={error} />
      {job && <JobView job={job} />}
      {ask.dialog}
    </Panel>
  );
}

function JobView({ job }: { job: Job }) {
  const p = job.progress ?? {};
  const total = p.total ?? (job.status === 'running' ? undefined : p.done);
  return (
    <div data-testid={`job-${job.type}`}>
      <p class="row" role="status">
        <StatusBadge status={job.status} />
        <span class="muted">{t('job_line', { id: job.task_id, by: job.created_by ?? '—', at: formatTime(job.created_at) })}</span>
      </p>
      <label class="sr-only" for={`progress-${job.task_id}`}>
        {t('progress')}
      </label>
      <progress id={`progress-${job.task_id}`} value={p.done ?? 0} max={total || 1} />
      <Figures data={job.result && typeof job.result === 'object' ? job.result : p} label={t('progress')} />
      {job.error && <div class="alert">{job.error}</div>}
      {job.result && (job.type === 'channel_test' || job.type === 'balance_update') && (
        <ChannelFailures failures={job.result.failures ?? []} kind={job.type === 'channel_test' ? 'test' : 'balance'} caption={t('failures')} />
      )}
      {job.result &&
        (TABLES[job.type] ?? []).map((table) => <RecordsTable rows={job.result[table.key] ?? []} columns={table.columns} caption={t(table.caption)} rowKey="channel_id" />)}
    </div>
  );
}
