import { navigate, useRoute } from '../../shared/ui';
import { t } from '../texts';
import { AffinitySettings } from './AffinitySettings';
import { DeploymentSettings } from './DeploymentSettings';
import { RatioSettings } from './RatioSettings';
import './settings.css';

const SECTIONS = [
  ['ratios', 'set_ratios'],
  ['deployments', 'set_deploy'],
  ['affinity', 'set_affinity'],
] as const;

/** Settings that were CLI-only, one section at a time (`?section=`): prices, io.net, channel affinity. */
export function SettingsPage() {
  const { query } = useRoute();
  const section = SECTIONS.find(([s]) => s === query.get('section'))?.[0] ?? 'ratios';
  return (
    <>
      <h2 class="page-title">{t('settings')}</h2>
      <nav class="subtabs" aria-label={t('set_sections')}>
        {SECTIONS.map(([s, label]) => {
          const to = s === 'ratios' ? '/settings' : `/settings?section=${s}`;
          return (
            <a href={to} aria-current={s === section ? 'page' : undefined} onClick={(e) => (e.preventDefault(), navigate(to))}>
              {t(label)}
            </a>
          );
        })}
      </nav>
      {section === 'ratios' && <RatioSettings />}
      {section === 'deployments' && <DeploymentSettings />}
      {section === 'affinity' && <AffinitySettings />}
    </>
  );
}
