import { useState } from 'preact/hooks';
import { ErrorBox, useAction, useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Figures, Panel, RecordsTable } from '../widgets';

/** Runs one call on demand and keeps its answer for the panel's view. */
function useLoaded<T>(f: () => Promise<T>) {
  const [data, setData] = useState<T | null>(null);
  const { busy, error, run } = useAction();
  return { data, busy, error, load: () => run(async () => setData(await f())) };
}

/** G38: applies the detected upstream model changes of every channel; a summary and a row per channel. */
export function ApplyUpdatesPanel() {
  const s = useLoaded(() => api.call('G38'));
  const confirm = useConfirm();
  const start = async () => (await confirm.ask({ title: t('ops_apply'), message: t('confirm_apply'), confirm: t('apply_now'), cancel: t('cancel') })) && s.load();
  return (
    <Panel id="ops-apply" title={t('ops_apply')} hint={t('ops_apply_hint')} actions={<button type="button" disabled={s.busy} onClick={start}>{t('start')}</button>}>
      {confirm.dialog}
      <ErrorBox error={s.error} />
      {s.data && (
        <>
          <Figures data={{ ...s.data, failed: s.data.failed_channel_ids.length }} keys={['processed_channels', 'added_models', 'removed_models', 'failed', 'more']} />
          <RecordsTable rows={s.data.results} caption={t('applied')} rowKey="channel_id" columns={[{ key: 'channel_id' }, { key: 'channel_name' }, { key: 'added_models' }, { key: 'removed_models' }]} />
          {s.data.failures.length > 0 && <RecordsTable rows={s.data.failures} caption={t('failures')} columns={[{ key: 'channel_id' }, { key: 'channel_name' }, { key: 'code' }, { key: 'message' }]} />}
        </>
      )}
    </Panel>
  );
}

/** G18: rebuilds the abilities index from the channels. */
export function RebuildIndexPanel() {
  const s = useLoaded(() => api.call('G18'));
  return (
    <Panel id="ops-fix" title={t('ops_fix')} hint={t('ops_fix_hint')} actions={<button type="button" disabled={s.busy} onClick={s.load}>{t('start')}</button>}>
      <ErrorBox error={s.error} />
      {s.data && <Figures data={s.data} keys={['success', 'fails']} />}
    </Panel>
  );
}

/** G20: the models of enabled channels. */
export function EnabledModelsPanel() {
  const s = useLoaded<string[]>(() => api.call('G20'));
  return (
    <Panel id="ops-models" title={t('ops_models')} actions={<button type="button" class="secondary" disabled={s.busy} onClick={s.load}>{t('load')}</button>}>
      <ErrorBox error={s.error} />
      {s.data && (
        <>
          <p class="muted">{t('n_models', { n: s.data.length })}</p>
          <ul class="chips plain-list" aria-label={t('ops_models')}>
            {s.data.map((m) => (
              <li class="badge">{m}</li>
            ))}
          </ul>
        </>
      )}
    </Panel>
  );
}

/** G62: channel-affinity cache statistics (root). */
export function AffinityPanel() {
  const s = useLoaded(() => api.call('G62'));
  const rules = Object.entries<number>(s.data?.by_rule_name ?? {}).map(([rule, n]) => ({ rule, n }));
  return (
    <Panel id="ops-affinity" title={t('ops_affinity')} actions={<button type="button" class="secondary" disabled={s.busy} onClick={s.load}>{t('load')}</button>}>
      <ErrorBox error={s.error} />
      {s.data && (
        <>
          <Figures data={s.data} keys={['enabled', 'total', 'unknown', 'cache_capacity', 'cache_algo']} />
          <RecordsTable rows={rules} caption={t('by_rule')} columns={[{ key: 'rule' }, { key: 'n', label: t('f_total') }]} />
        </>
      )}
    </Panel>
  );
}
