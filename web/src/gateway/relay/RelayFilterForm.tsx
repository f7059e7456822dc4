import { useState } from 'preact/hooks';
import { Field, Select } from '../../shared/ui';
import { t } from '../texts';
import { freshFilters, RANGES, type RangeName, type RelayFilters } from './format';

type Draft = Omit<RelayFilters, 'since'>;

/** The filters of the relay page; applying them (or refreshing) fixes the start of the time range to now. */
export function RelayFilterForm({ applied, busy, onApply }: { applied: RelayFilters; busy: boolean; onApply: (f: RelayFilters) => void }) {
  const [draft, setDraft] = useState<Draft>(applied);
  const set = (key: keyof Draft) => (e: Event) => setDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement | HTMLSelectElement).value });
  const apply = (e: Event) => {
    e.preventDefault();
    onApply({ ...draft, model: draft.model.trim(), caller: draft.caller.trim(), since: freshFilters(draft.range).since });
  };
  return (
    <form onSubmit={apply} role="search" aria-label={t('rl_filters')}>
      <div class="row">
        <Field label={t('rl_model')} name="model" type="search" value={draft.model} onInput={set('model')} />
        <Field label={t('rl_channel_id')} name="channel_id" type="number" min={1} inputMode="numeric" value={draft.channelId} onInput={set('channelId')} />
        <Select
          label={t('rl_status')}
          name="status"
          value={draft.status}
          onChange={set('status')}
          options={[
            ['', t('rl_any')],
            ['success', t('rl_success')],
            ['error', t('rl_error')],
          ]}
        />
        <Field label={t('rl_caller')} hint={t('rl_caller_hint')} name="caller" type="search" value={draft.caller} onInput={set('caller')} />
        <Select label={t('rl_range')} name="range" value={draft.range} onChange={set('range')} options={(Object.keys(RANGES) as RangeName[]).map((r) => [r, t(`rl_range_${r}`)])} />
      </div>
      <div class="row">
        <button type="submit" disabled={busy}>
          {t('rl_apply')}
        </button>
      </div>
    </form>
  );
}
