import { useState } from 'preact/hooks';
import { ErrorBox, useAction } from '../shared/ui';
import { api } from './session';
import { t } from './texts';

/** Operations of the upstream and platform issues: background jobs (G33, G35, G40) followed through GS02, and read-outs. */
export function OperationsPage() {
  const [output, setOutput] = useState<{ title: string; body: unknown } | null>(null);
  const [job, setJob] = useState<any>(null);
  const { busy, error, run } = useAction();
  const show = (title: string, f: () => Promise<unknown>) =>
    run(async () => {
      const body = await f();
      setOutput({ title, body });
      if (body && typeof body === 'object' && 'task_id' in body) setJob(body);
    });
  const refreshJob = () => run(async () => setJob(await api.call('GS02', { params: { task_id: job.task_id } })));
  const buttons: Array<[string, () => Promise<unknown>]> = [
    [t('ops_tests'), () => api.call('G33')],
    [t('ops_balances'), () => api.call('G35')],
    [t('ops_detect'), () => api.call('G40')],
    [t('ops_apply'), () => api.call('G38')],
    [t('ops_fix'), () => api.call('G18')],
    [t('ops_models'), () => api.call('G20')],
    [t('ops_deployments'), () => api.call('G41')],
    [t('ops_plugins'), () => api.call('G77')],
    [t('ops_tasks'), () => api.call('GS03')],
    [t('ops_affinity'), () => api.call('G62')],
  ];
  return (
    <section class="card" aria-labelledby="ops-title">
      <h2 id="ops-title">{t('operations')}</h2>
      <div class="row">
        {buttons.map(([label, f]) => (
          <button type="button" class="secondary" disabled={busy} onClick={() => show(label, f)}>
            {label}
          </button>
        ))}
      </div>
      <ErrorBox error={error} />
      {job && (
        <p class="row" role="status">
          {t('job', { id: job.task_id, status: job.status })}
          <button type="button" class="secondary" disabled={busy} onClick={refreshJob}>
            {t('refresh')}
          </button>
        </p>
      )}
      {output && (
        <>
          <h3>{output.title}</h3>
          <pre class="mono">{JSON.stringify(output.body, null, 2)}</pre>
        </>
      )}
    </section>
  );
}
