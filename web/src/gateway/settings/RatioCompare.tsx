import { useState } from 'preact/hooks';
import { ErrorBox, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Panel, RecordsTable } from '../widgets';
import { COLUMNS, type Column } from './ratio-rows';

type Source = { id: number; name: string };
type Difference = { model: string; field: Column; current: unknown; upstreams: Record<string, unknown> };

/** G82 / G83: asks chosen sources for their prices and offers their values for the table; saves nothing. */
export function RatioCompare({ onUse }: { onUse: (model: string, field: Column, value: string) => void }) {
  const [sources, setSources] = useState<Source[] | null>(null);
  const [chosen, setChosen] = useState<Set<number>>(new Set());
  const [found, setFound] = useState<{ differences: Difference[]; failed: { name: string; error?: string }[] } | null>(null);
  const { busy, error, run } = useAction();
  const load = () => run(async () => setSources((await api.call('G82')) as Source[]));
  const compare = () =>
    run(async () => {
      const r: any = await api.call('G83', { body: { channel_ids: [...chosen] } });
      const differences: Difference[] = [];
      for (const [model, fields] of Object.entries<any>(r.differences ?? {}))
        for (const field of COLUMNS) if (fields[field]) differences.push({ model, field, current: fields[field].current, upstreams: fields[field].upstreams });
      setFound({ differences, failed: (r.test_results ?? []).filter((x: any) => x.status !== 'success') });
    });
  const toggle = (id: number, on: boolean) => setChosen((s) => (on ? new Set([...s, id]) : new Set([...s].filter((x) => x !== id))));
  return (
    <Panel
      id="rc-compare"
      title={t('rc_compare')}
      hint={t('rc_compare_hint')}
      actions={
        !sources && (
          <button type="button" class="secondary" disabled={busy} onClick={load}>
            {t('load')}
          </button>
        )
      }
    >
      {sources && (
        <fieldset class="plain">
          <legend class="muted">{t('rc_sources')}</legend>
          <div class="chips">
            {sources.map((s) => (
              <label class="badge">
                <input type="checkbox" checked={chosen.has(s.id)} onChange={(e) => toggle(s.id, e.currentTarget.checked)} /> {s.name}
              </label>
            ))}
          </div>
          <button type="button" disabled={busy || chosen.size === 0} onClick={compare}>
            {t('rc_run_compare')}
          </button>
        </fieldset>
      )}
      <ErrorBox error={error} />
      {found && found.failed.length > 0 && <RecordsTable rows={found.failed} caption={t('failures')} columns={[{ key: 'name', label: t('name') }, { key: 'error', label: t('rc_error') }]} />}
      {found && found.differences.length === 0 && <p class="muted">{t('rc_no_difference')}</p>}
      {found && found.differences.length > 0 && (
        <div class="table-scroll">
          <RecordsTable
            rows={found.differences.slice(0, 200)}
            columns={[
              { key: 'model', label: t('rc_model') },
              { key: 'field', label: t('rc_field'), render: (d: Difference) => t(`rc_${d.field}`) },
              { key: 'current', label: t('rc_current'), render: (d: Difference) => String(d.current ?? '—') },
              {
                key: 'upstreams',
                label: t('rc_upstream'),
                render: (d: Difference) => (
                  <div class="row">
                    {Object.entries(d.upstreams)
                      .filter(([, v]) => v !== 'same')
                      .map(([name, v]) => (
                        <button type="button" class="link" title={name} onClick={() => onUse(d.model, d.field, String(v))}>
                          {t('rc_use', { value: String(v) })} ({name})
                        </button>
                      ))}
                  </div>
                ),
              },
            ]}
          />
        </div>
      )}
    </Panel>
  );
}
