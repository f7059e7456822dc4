import { channelTypes } from '../../generated/gateway-api';
import { api } from '../session';
import { t } from '../texts';

export const typeName = (id: number) => channelTypes[id]?.name ?? `#${id}`;
export type ChannelDialog = { kind: 'form'; id: number | null } | { kind: 'reveal'; id: number } | { kind: 'keys'; id: number } | { kind: 'tag'; tag: string } | null;
export type Act = (f: () => Promise<unknown>, showResult?: boolean) => void;

type Props = { c: any; selected: boolean; onSelect: (on: boolean) => void; act: Act; open: (d: ChannelDialog) => void; child?: boolean };

/** One channel with its selection box and actions (G11 status, G14 copy, G34 test, G36 balance, G04 delete). */
export function ChannelRow({ c, selected, onSelect, act, open, child }: Props) {
  return (
    <tr data-id={c.id} class={child ? 'child' : undefined}>
      <td>
        <input type="checkbox" aria-label={t('select_one', { id: c.id })} checked={selected} onChange={(e) => onSelect(e.currentTarget.checked)} />
      </td>
      <td>{c.id}</td>
      <td>{c.name}</td>
      <td>{typeName(c.type)}</td>
      <td>
        <span class={`badge ${c.status === 1 ? 'on' : 'off'}`}>{t(`st_${c.status}`)}</span>
      </td>
      <td>{c.group}</td>
      <td class="muted">{String(c.models ?? '').slice(0, 60)}</td>
      <td>{c.priority}</td>
      <td>{c.tag}</td>
      <td>
        <div class="row">
          <button type="button" class="link" onClick={() => open({ kind: 'form', id: c.id })}>
            {t('edit')}
          </button>
          <button type="button" class="link" onClick={() => act(() => api.call('G11', { params: { id: c.id }, body: { status: c.status === 1 ? 2 : 1 } }))}>
            {c.status === 1 ? t('disable') : t('enable')}
          </button>
          <button type="button" class="link" onClick={() => act(() => api.call('G14', { params: { id: c.id } }))}>
            {t('copy')}
          </button>
          <button type="button" class="link" onClick={() => act(() => api.call('G34', { params: { id: c.id } }), true)}>
            {t('test')}
          </button>
          <button type="button" class="link" onClick={() => act(() => api.call('G36', { params: { id: c.id } }), true)}>
            {t('balance')}
          </button>
          {c.channel_info?.is_multi_key && (
            <button type="button" class="link" onClick={() => open({ kind: 'keys', id: c.id })}>
              {t('keys')}
            </button>
          )}
          <button type="button" class="link" onClick={() => open({ kind: 'reveal', id: c.id })}>
            {t('reveal')}
          </button>
          <button type="button" class="link" onClick={() => confirm(t('confirm_delete', { id: c.id, name: c.name })) && act(() => api.call('G04', { params: { id: c.id } }))}>
            {t('delete')}
          </button>
        </div>
      </td>
    </tr>
  );
}
