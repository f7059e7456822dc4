import { api } from './session';
import { t } from './texts';
import { JobPanel } from './ops/JobPanel';
import { AffinityPanel, ApplyUpdatesPanel, EnabledModelsPanel, RebuildIndexPanel } from './ops/Maintenance';
import { PluginsPanel, TasksPanel } from './ops/Plugins';

/** Operations of the upstream and platform: background jobs followed through GS02, maintenance and read-outs. */
export function OperationsPage() {
  return (
    <>
      <h2 class="page-title">{t('operations')}</h2>
      <JobPanel id="ops-tests" title={t('ops_tests')} hint={t('ops_tests_hint')} start={() => api.call('G33')} confirm={{ title: t('ops_tests'), message: t('confirm_tests'), confirm: t('test_now'), cancel: t('cancel') }} />
      <JobPanel id="ops-balances" title={t('ops_balances')} hint={t('ops_balances_hint')} start={() => api.call('G35')} />
      <JobPanel id="ops-detect" title={t('ops_detect')} hint={t('ops_detect_hint')} start={() => api.call('G40')} />
      <ApplyUpdatesPanel />
      <RebuildIndexPanel />
      <EnabledModelsPanel />
      <PluginsPanel />
      <TasksPanel />
      <AffinityPanel />
    </>
  );
}
