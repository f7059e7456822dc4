// The customer's API keys (AP01–AP08): a paged list with status, spent and remaining, expiry and last use;
// search by name; create (the key shown once, KeyShown.tsx), edit, enable/disable, delete and batch delete,
// each destructive change confirmed in the console's own dialog.
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, formatTime, useAction, useConfirm } from '../../shared/ui';
import type { CustomerToken } from '../../generated/account-api';
import { api } from '../session';
import { t } from '../texts';
import { Money, Pager, TableBox } from '../widgets';
import { KeyForm } from './KeyForm';
import { KeyShown } from './KeyShown';

const PAGE_SIZE = 10;
const STATUS_CLASS: Record<number, string> = { 1: 'on', 2: 'off', 3: 'off', 4: 'off' };

export function KeysPage() {
  const [page, setPage] = useState(1);
  const [keyword, setKeyword] = useState('');
  const [search, setSearch] = useState('');
  const [version, setVersion] = useState(0);
  const [data, setData] = useState<{ items: CustomerToken[]; total: number } | null>(null);
  const [models, setModels] = useState<string[]>([]);
  const [group, setGroup] = useState('');
  const [editing, setEditing] = useState<CustomerToken | 'new' | null>(null);
  const [shown, setShown] = useState<{ name: string; secret: string; model: string } | null>(null);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const { ask, dialog } = useConfirm();

  const load = () =>
    run(async () => {
      const query = { p: page, page_size: PAGE_SIZE };
      setData(search ? await api.call('AP02', { query: { ...query, keyword: search } }) : await api.call('AP01', { query }));
      setSelected(new Set());
    });
  useEffect(() => void load(), [page, search, version]);
  useEffect(() => {
    void api.call('AP29').then(setModels, () => setModels([]));
    void api.call('AP30').then((g) => setGroup(Object.keys(g)[0] ?? ''), () => setGroup(''));
  }, []);

  const done = (created?: { token: CustomerToken; secret: string }) => {
    setEditing(null);
    if (created) {
      const limits = created.token.model_limits_enabled ? created.token.model_limits.split(',').filter(Boolean) : [];
      setShown({ name: created.token.name, secret: created.secret, model: limits[0] ?? models[0] ?? 'MODEL' });
      setNotice('');
    } else setNotice(t('key_saved'));
    void load();
  };
  const setStatus = (k: CustomerToken, status: 1 | 2) =>
    run(async () => {
      await api.call('AP06', { query: { status_only: 'true' }, body: { id: k.id, status } });
      setNotice(t(status === 1 ? 'key_enabled_done' : 'key_disabled_done', { name: k.name }));
      await load();
    });
  const remove = async (k: CustomerToken) => {
    if (!(await ask({ title: t('key_delete_title', { name: k.name }), message: t('key_delete_text'), confirm: t('delete'), cancel: t('cancel'), danger: true }))) return;
    await run(async () => {
      await api.call('AP07', { params: { id: k.id } });
      setNotice(t('key_deleted_done', { name: k.name }));
      await load();
    });
  };
  const removeSelected = async () => {
    const ids = [...selected];
    if (!(await ask({ title: t('keys_delete_title', { n: ids.length }), message: t('key_delete_text'), confirm: t('delete'), cancel: t('cancel'), danger: true }))) return;
    await run(async () => {
      const n = await api.call('AP08', { body: { ids } });
      setNotice(t('keys_deleted_done', { n }));
      if (page > 1 && data && ids.length >= data.items.length) setPage(page - 1);
      else await load();
    });
  };
  const toggle = (id: number, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };
  const items = data?.items ?? [];
  const all = items.length > 0 && items.every((k) => selected.has(k.id));

  return (
    <section class="card" aria-labelledby="keys-title">
      <div class="row spread">
        <h2 id="keys-title">{t('keys')}</h2>
        <button type="button" onClick={() => setEditing('new')}>
          {t('key_new')}
        </button>
      </div>
      <p class="muted">{t('keys_intro')}</p>
      <form class="row" role="search" onSubmit={(e) => (e.preventDefault(), setPage(1), setSearch(keyword.trim()), setVersion(version + 1))}>
        <Field label={t('key_search')} type="search" name="keyword" maxLength={100} value={keyword} onInput={(e) => setKeyword(e.currentTarget.value)} />
        <button type="submit" class="secondary" disabled={busy}>
          {t('search')}
        </button>
      </form>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      {selected.size > 0 && (
        <div class="batch row" role="region" aria-label={t('keys_selected', { n: selected.size })}>
          <span>{t('keys_selected', { n: selected.size })}</span>
          <button type="button" class="danger" disabled={busy} onClick={removeSelected}>
            {t('keys_delete_selected')}
          </button>
        </div>
      )}
      {data && items.length === 0 && <p class="muted">{search ? t('keys_none_match') : t('keys_none')}</p>}
      {items.length > 0 && (
        <TableBox label={t('keys')}>
          <table class="keys">
            <thead>
              <tr>
                <th scope="col">
                  <input type="checkbox" aria-label={t('keys_select_all')} checked={all} onChange={(e) => setSelected(e.currentTarget.checked ? new Set(items.map((k) => k.id)) : new Set())} />
                </th>
                <th scope="col">{t('key_name')}</th>
                <th scope="col">{t('key_key')}</th>
                <th scope="col">{t('status')}</th>
                <th scope="col">{t('key_used')}</th>
                <th scope="col">{t('key_remaining')}</th>
                <th scope="col">{t('key_expires')}</th>
                <th scope="col">{t('key_last_used')}</th>
                <th scope="col">{t('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {items.map((k) => (
                <tr data-key-name={k.name} data-id={k.id}>
                  <td>
                    <input type="checkbox" aria-label={t('key_select', { name: k.name })} checked={selected.has(k.id)} onChange={(e) => toggle(k.id, e.currentTarget.checked)} />
                  </td>
                  <td>
                    <strong>{k.name}</strong>
                    {k.model_limits_enabled && <div class="muted small">{t('key_models_n', { n: k.model_limits.split(',').filter(Boolean).length })}</div>}
                  </td>
                  <td>
                    <code class="small">{k.key}</code>
                  </td>
                  <td data-col="status">
                    <span class={`badge ${STATUS_CLASS[k.status] ?? ''}`}>{t(`key_status_${k.status}`)}</span>
                  </td>
                  <td class="num" data-col="used">
                    <Money units={k.used_quota} />
                  </td>
                  <td class="num" data-col="remaining">
                    {k.unlimited_quota ? t('key_unlimited_short') : <Money units={k.remain_quota} />}
                  </td>
                  <td class="small nowrap">{k.expired_time === -1 ? t('key_never_expires') : formatTime(k.expired_time)}</td>
                  <td class="small nowrap">{k.accessed_time ? formatTime(k.accessed_time) : t('never')}</td>
                  <td>
                    <div class="row nowrap-row">
                      <button type="button" class="secondary" aria-label={t('key_edit', { name: k.name })} onClick={() => setEditing(k)}>
                        {t('edit')}
                      </button>
                      {k.status === 2 ? (
                        <button type="button" class="secondary" disabled={busy} aria-label={t('key_enable', { name: k.name })} onClick={() => setStatus(k, 1)}>
                          {t('enable')}
                        </button>
                      ) : k.status === 1 ? (
                        <button type="button" class="secondary" disabled={busy} aria-label={t('key_disable', { name: k.name })} onClick={() => setStatus(k, 2)}>
                          {t('disable')}
                        </button>
                      ) : null}
                      <button type="button" class="danger" disabled={busy} aria-label={t('key_delete', { name: k.name })} onClick={() => remove(k)}>
                        {t('delete')}
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {data && data.total > PAGE_SIZE && <Pager page={page} size={PAGE_SIZE} total={data.total} busy={busy} onPage={setPage} />}
      {editing && <KeyForm token={editing === 'new' ? null : editing} models={models} group={group} onDone={done} onCancel={() => setEditing(null)} />}
      {shown && <KeyShown {...shown} onClose={() => setShown(null)} />}
      {dialog}
    </section>
  );
}
