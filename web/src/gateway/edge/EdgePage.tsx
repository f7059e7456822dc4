import { useEffect, useState } from 'preact/hooks';
import { CODE, CodeText, ErrorBox, navigate, useAction, useRoute } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { KeysPanel } from './KeysPanel';
import { ModelsPanel } from './ModelsPanel';
import { UsagePanel } from './UsagePanel';
import { WalletsPanel } from './WalletsPanel';
import { WebhooksPanel } from './WebhooksPanel';

const VIEWS = [
  ['models', 'edge_models', ModelsPanel],
  ['keys', 'edge_keys', KeysPanel],
  ['wallets', 'edge_wallets', WalletsPanel],
  ['usage', 'edge_usage', UsagePanel],
  ['webhooks', 'edge_webhooks', WebhooksPanel],
] as const;

interface Status {
  served: boolean;
  admission_mode: string | null;
  relay_configured: boolean;
}

/**
 * The edge (machine clients) when it runs in this process (GS22): public models, developer keys, wallets,
 * usage and webhooks, one section at a time (?view=…); otherwise a notice saying how to run it here.
 */
export function EdgePage() {
  const { query } = useRoute();
  const [status, setStatus] = useState<Status | null>(null);
  const { error, run } = useAction();
  useEffect(() => void run(async () => setStatus(await api.call('GS22'))), []);
  const view = VIEWS.find((v) => v[0] === query.get('view')) ?? VIEWS[0];
  const Panel = view[2];
  return (
    <>
      <h2 class="page-title">{t('edge_title')}</h2>
      <ErrorBox error={error} />
      {status && !status.served && (
        <p class="notice" data-testid="edge-not-served">
          <CodeText text={t('edge_not_served', { services: CODE, command: CODE })} codes={['SERVICES=account,gateway,edge', 'npm run cli -- edge …']} />
        </p>
      )}
      {status?.served && (
        <>
          <p class="muted">
            {t('edge_admission', { mode: status.admission_mode ?? '—' })}
            {!status.relay_configured && ` · ${t('edge_no_relay')}`}
          </p>
          <nav class="tabs sub" aria-label={t('edge_sections')}>
            {VIEWS.map(([id, label]) => (
              <a href={`/edge?view=${id}`} aria-current={view[0] === id ? 'page' : undefined} onClick={(e) => (e.preventDefault(), navigate(`/edge?view=${id}`))}>
                {t(label)}
              </a>
            ))}
          </nav>
          <Panel key={view[0]} />
        </>
      )}
    </>
  );
}
