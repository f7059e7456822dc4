import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { explain } from './format';

export type FetchSource = { id: number } | { type: number; base_url: string; key: string };

/**
 * The upstream's models (G17 for a stored channel, G16 for credentials typed in the form) as a list to pick
 * from; models the channel has that the upstream does not list stay in the list, marked. "Use" replaces the
 * channel's models with the checked ones, in the list's order.
 */
export function ModelPicker({ source, current, onPick, onClose }: { source: FetchSource; current: string[]; onPick: (models: string[]) => void; onClose: () => void }) {
  const [upstream, setUpstream] = useState<string[] | null>(null);
  const [checked, setChecked] = useState<Set<string>>(new Set());
  const [filter, setFilter] = useState('');
  const { busy, error, run } = useAction();
  useEffect(() => {
    run(async () => {
      const list: string[] = 'id' in source ? await api.call('G17', { params: { id: source.id } }) : await api.call('G16', { body: { type: source.type, base_url: source.base_url || null, key: source.key } });
      setUpstream(list);
      setChecked(new Set(current.length ? current : list));
    });
  }, []);
  const offered = new Set(upstream ?? []);
  const all = [...(upstream ?? []), ...current.filter((m) => !offered.has(m))];
  const shown = all.filter((m) => m.toLowerCase().includes(filter.trim().toLowerCase()));
  const set = (models: string[], on: boolean) => {
    const next = new Set(checked);
    for (const m of models) on ? next.add(m) : next.delete(m);
    setChecked(next);
  };
  const picked = all.filter((m) => checked.has(m));
  return (
    <fieldset class="picker" aria-busy={busy}>
      <legend>{t('pick_models')}</legend>
      {busy && <p class="muted" role="status">{t('fetching_models')}</p>}
      {error ? (
        <div class="alert" role="alert">
          {t('fetch_failed', { message: explain(error).message })}
        </div>
      ) : null}
      {upstream && (
        <>
          <p class="muted" role="status">
            {t('fetched_n', { n: upstream.length })}
          </p>
          <div class="row">
            <input
              type="search"
              class="picker-filter"
              aria-label={t('filter_models')}
              placeholder={t('filter_models')}
              value={filter}
              onInput={(e) => setFilter(e.currentTarget.value)}
              onKeyDown={(e) => e.key === 'Enter' && e.preventDefault()}
            />
            <button type="button" class="secondary" onClick={() => set(shown, true)}>
              {t('select_shown')}
            </button>
            <button type="button" class="secondary" onClick={() => set(shown, false)}>
              {t('select_none')}
            </button>
          </div>
          <ul class="picker-list plain-list" aria-label={t('pick_models')}>
            {shown.map((m) => (
              <li>
                <label>
                  <input type="checkbox" checked={checked.has(m)} onChange={(e) => set([m], e.currentTarget.checked)} /> <span class="mono">{m}</span>
                  {!offered.has(m) && <span class="badge">{t('not_offered')}</span>}
                </label>
              </li>
            ))}
          </ul>
        </>
      )}
      <div class="row">
        <button type="button" disabled={!upstream} onClick={() => onPick(picked)}>
          {t('use_n_models', { n: picked.length })}
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          {t('cancel')}
        </button>
      </div>
    </fieldset>
  );
}
