import { useState } from 'preact/hooks';
import { api } from '../session';
import { t } from '../texts';
import type { Act } from './context';

/** Actions on the selected channels: status (G28), tag (G13, empty removes it) and delete (G12, confirmed). */
export function BatchBar({ ids, act, clear, confirmDelete }: { ids: number[]; act: Act; clear: () => void; confirmDelete: () => Promise<boolean> }) {
  const [tag, setTag] = useState('');
  const run = (f: () => Promise<unknown>) => act(async () => (await f(), clear()));
  return (
    <div class="row batch" role="group" aria-label={t('batch_actions')}>
      <strong>{t('n_selected', { n: ids.length })}</strong>
      <button type="button" class="secondary" onClick={() => run(() => api.call('G28', { body: { ids, status: 1 } }))}>
        {t('enable')}
      </button>
      <button type="button" class="secondary" onClick={() => run(() => api.call('G28', { body: { ids, status: 2 } }))}>
        {t('disable')}
      </button>
      <label class="row">
        <span>{t('batch_tag')}</span>
        <input name="batch_tag" value={tag} maxLength={64} placeholder={t('batch_tag_hint')} onInput={(e) => setTag(e.currentTarget.value)} />
      </label>
      <button type="button" class="secondary" onClick={() => run(() => api.call('G13', { body: { ids, tag: tag.trim() || null } }))}>
        {t('set_tag')}
      </button>
      <button type="button" class="danger" onClick={async () => (await confirmDelete()) && run(() => api.call('G12', { body: { ids } }))}>
        {t('delete_selected')}
      </button>
      <button type="button" class="link" onClick={clear}>
        {t('clear_selection')}
      </button>
    </div>
  );
}
