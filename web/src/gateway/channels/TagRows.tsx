import { useState } from 'preact/hooks';
import { api } from '../session';
import { t } from '../texts';
import { ChannelRow } from './ChannelRow';
import { useChannels } from './context';

/**
 * Tag mode (as the reference's table): one row per tag with its channel count, enabled count and actions on
 * the whole tag (G31 enable, G30 disable, G29 edit), and its channels beneath it, folded on demand.
 */
export function TagRows({ tag, channels }: { tag: string; channels: any[] }) {
  const ctx = useChannels();
  const [expanded, setExpanded] = useState(true);
  const enabled = channels.filter((c) => c.status === 1).length;
  const ids = channels.map((c) => c.id);
  const all = ids.every((id) => ctx.selected.has(id));
  return (
    <>
      <tr class="tag-row" data-tag={tag}>
        <td>
          <input type="checkbox" aria-label={t('select_tag', { tag })} checked={all} onChange={(e) => ctx.select(ids, e.currentTarget.checked)} />
        </td>
        <td colSpan={1 + ctx.columns.length}>
          <div class="row">
            <button type="button" class="link" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
              {expanded ? '▾' : '▸'} {t('tag')}: <strong>{tag}</strong>
            </button>
            <span class={`badge ${enabled === channels.length ? 'on' : enabled === 0 ? 'off' : ''}`}>{t('n_enabled', { n: enabled, total: channels.length })}</span>
            <span class="muted">{t('n_channels', { n: channels.length })}</span>
          </div>
        </td>
        <td class="actions-cell">
          <div class="row actions">
            <button type="button" class="link" onClick={() => ctx.act(() => api.call('G31', { body: { tag } }))}>
              {t('tag_enable')}
            </button>
            <button type="button" class="link" onClick={() => ctx.act(() => api.call('G30', { body: { tag } }))}>
              {t('tag_disable')}
            </button>
            <button type="button" class="link" onClick={() => ctx.open({ kind: 'tag', tag })}>
              {t('tag_edit')}
            </button>
          </div>
        </td>
      </tr>
      {expanded && channels.map((c) => <ChannelRow c={c} child />)}
    </>
  );
}
