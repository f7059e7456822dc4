import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, Select, useAction } from '../shared/ui';
import { channelTypes } from '../generated/gateway-api';
import { api } from './session';
import { t } from './texts';
import { ChannelForm, MultiKeys, RevealKey } from './ChannelForm';

const typeName = (id: number) => channelTypes[id]?.name ?? `#${id}`;
const FILTERS = { keyword: '', status: '', type: '', group: '', model: '', sort_by: '', sort_order: 'desc', tag_mode: false, page_size: 10 };

type Dialogs = { kind: 'form'; id: number | null } | { kind: 'reveal'; id: number } | { kind: 'keys'; id: number } | null;

/** G01 (list) or G27 (search, when a keyword is given): server-side paging, filters, sort and tag mode. */
export function ChannelsPage() {
  const [draft, setDraft] = useState(FILTERS);
  const [filters, setFilters] = useState(FILTERS);
  const [page, setPage] = useState(1);
  const [data, setData] = useState<any>(null);
  const [dialog, setDialog] = useState<Dialogs>(null);
  const [notice, setNotice] = useState('');
  const [result, setResult] = useState<any>(null);
  const { busy, error, run } = useAction();
  const load = () =>
    run(async () => {
      const query = {
        p: page,
        page_size: filters.page_size,
        status: filters.status || undefined,
        type: filters.type || undefined,
        group: filters.group.trim() || undefined,
        model: filters.model.trim() || undefined,
        sort_by: filters.sort_by || undefined,
        sort_order: filters.sort_by ? filters.sort_order : undefined,
        tag_mode: filters.tag_mode ? 'true' : undefined,
      } as any;
      setData(filters.keyword.trim() ? await api.call('G27', { query: { ...query, keyword: filters.keyword.trim() } }) : await api.call('G01', { query }));
    });
  useEffect(() => void load(), [filters, page]);
  const act = (f: () => Promise<unknown>, showResult = false) =>
    run(async () => {
      setNotice('');
      setResult(null);
      const r = await f();
      setNotice(t('done'));
      if (showResult && r !== undefined && typeof r === 'object') setResult(r);
      await load();
    });
  const search = (e: Event) => {
    e.preventDefault();
    setPage(1);
    setFilters({ ...draft });
  };
  const set = (k: keyof typeof FILTERS) => (e: any) => setDraft({ ...draft, [k]: e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value });
  const pages = data ? Math.max(1, Math.ceil(data.total / data.page_size)) : 1;
  const tags = [...new Set<string>((data?.items ?? []).map((c: any) => c.tag).filter(Boolean))];
  return (
    <>
      <section class="card" aria-labelledby="filters-title">
        <h2 id="filters-title">{t('channels')}</h2>
        <form onSubmit={search} role="search">
          <div class="row">
            <Field label={t('keyword')} name="keyword" type="search" value={draft.keyword} onInput={set('keyword')} />
            <Select label={t('status')} name="status" value={draft.status} onChange={set('status')} options={[['', t('any')], ['1', t('st_1')], ['2', t('st_2')], ['3', t('st_3')]]} />
            <Select label={t('type')} name="type" value={draft.type} onChange={set('type')} options={[['', t('any')], ...Object.entries(channelTypes).map(([id, v]) => [id, v.name] as [string, string])]} />
            <Field label={t('group')} name="group" value={draft.group} onInput={set('group')} />
            <Field label={t('model')} name="model" value={draft.model} onInput={set('model')} />
          </div>
          <div class="row">
            <Select label={t('sort')} name="sort_by" value={draft.sort_by} onChange={set('sort_by')} options={[['', t('priority')], ['id', 'ID'], ['name', t('name')], ['balance', t('balance')], ['response_time', 'response_time'], ['test_time', 'test_time']]} />
            <Select label="↑↓" name="sort_order" value={draft.sort_order} onChange={set('sort_order')} options={[['desc', '↓ desc'], ['asc', '↑ asc']]} />
            <Select label={t('page_size')} name="page_size" value={String(draft.page_size)} onChange={(e) => setDraft({ ...draft, page_size: Number(e.currentTarget.value) })} options={[['10', '10'], ['20', '20'], ['50', '50'], ['100', '100']]} />
            <label class="row">
              <input type="checkbox" name="tag_mode" checked={draft.tag_mode} onChange={set('tag_mode')} /> {t('tag_mode')}
            </label>
            <button type="submit">{t('search')}</button>
            <button type="button" class="secondary" onClick={() => setDialog({ kind: 'form', id: null })}>
              {t('new_channel')}
            </button>
          </div>
        </form>
        {data?.type_counts && (
          <div class="chips" aria-label={t('type')}>
            {Object.entries(data.type_counts).map(([type, n]) => (
              <span class="badge">
                {typeName(Number(type))}: {String(n)}
              </span>
            ))}
          </div>
        )}
        {filters.tag_mode &&
          tags.map((tag) => (
            <div class="row">
              <strong>{tag}</strong>
              <button type="button" class="secondary" onClick={() => act(() => api.call('G31', { body: { tag } }))}>
                {t('tag_enable')}
              </button>
              <button type="button" class="secondary" onClick={() => act(() => api.call('G30', { body: { tag } }))}>
                {t('tag_disable')}
              </button>
            </div>
          ))}
      </section>
      {notice && <Notice>{notice}</Notice>}
      {result && <pre class="mono">{JSON.stringify(result, null, 2)}</pre>}
      <ErrorBox error={error} />
      <table aria-busy={busy}>
        <thead>
          <tr>
            <th scope="col">{t('id')}</th>
            <th scope="col">{t('name')}</th>
            <th scope="col">{t('type')}</th>
            <th scope="col">{t('status')}</th>
            <th scope="col">{t('group')}</th>
            <th scope="col">{t('models')}</th>
            <th scope="col">{t('priority')}</th>
            <th scope="col">{t('tag')}</th>
            <th scope="col">{t('actions')}</th>
          </tr>
        </thead>
        <tbody>
          {(data?.items ?? []).map((c: any) => (
            <tr data-id={c.id}>
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
                  <button type="button" class="link" onClick={() => setDialog({ kind: 'form', id: c.id })}>
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
                    <button type="button" class="link" onClick={() => setDialog({ kind: 'keys', id: c.id })}>
                      {t('keys')}
                    </button>
                  )}
                  <button type="button" class="link" onClick={() => setDialog({ kind: 'reveal', id: c.id })}>
                    {t('reveal')}
                  </button>
                  <button type="button" class="link" onClick={() => confirm(t('confirm_delete', { id: c.id, name: c.name })) && act(() => api.call('G04', { params: { id: c.id } }))}>
                    {t('delete')}
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {data && data.items.length === 0 && <p class="muted">{t('none')}</p>}
      <nav class="pager" aria-label="pages">
        <button type="button" class="secondary" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          {t('prev')}
        </button>
        <span>{t('page_of', { page, total: data?.total ?? 0 })}</span>
        <button type="button" class="secondary" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          {t('next')}
        </button>
      </nav>
      {dialog?.kind === 'form' && (
        <ChannelForm
          id={dialog.id}
          onClose={() => setDialog(null)}
          onSaved={(m) => {
            setDialog(null);
            setNotice(m);
            void load();
          }}
        />
      )}
      {dialog?.kind === 'reveal' && <RevealKey id={dialog.id} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'keys' && <MultiKeys id={dialog.id} onClose={() => (setDialog(null), void load())} />}
    </>
  );
}
