import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, Select, useAction } from '../../shared/ui';
import { channelTypes } from '../../generated/gateway-api';
import { api } from '../session';
import { t } from '../texts';
import { ChannelForm, MultiKeys, RevealKey } from './ChannelForm';
import { ChannelRow, typeName, type ChannelDialog } from './ChannelRow';
import { BatchBar } from './BatchBar';
import { TagRows } from './TagRows';
import { TagEdit } from './TagEdit';
import { Figures, Pager } from '../widgets';

const FILTERS = { keyword: '', status: '', type: '', group: '', model: '', sort_by: '', sort_order: 'desc', tag_mode: false, page_size: 10 };

/** Channels of one page grouped by tag, in the order the server sent them (tag mode sorts by tag). */
function byTag(items: any[]) {
  const groups = new Map<string, any[]>();
  for (const c of items) groups.set(c.tag ?? '', [...(groups.get(c.tag ?? '') ?? []), c]);
  return [...groups];
}

/** G01 (list) or G27 (search, when a keyword is given): server-side paging, filters, sort, tag mode and batch actions. */
export function ChannelsPage() {
  const [draft, setDraft] = useState(FILTERS);
  const [filters, setFilters] = useState(FILTERS);
  const [page, setPage] = useState(1);
  const [data, setData] = useState<any>(null);
  const [dialog, setDialog] = useState<ChannelDialog>(null);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const select = (ids: number[], on: boolean) => {
    const next = new Set(selected);
    for (const id of ids) on ? next.add(id) : next.delete(id);
    setSelected(next);
  };
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
      const d = filters.keyword.trim() ? await api.call('G27', { query: { ...query, keyword: filters.keyword.trim() } }) : await api.call('G01', { query });
      setData(d);
      // A selection keeps only the channels still on the page (after a delete, copy or re-read).
      setSelected((prev) => new Set(d.items.map((c: any) => c.id).filter((id: number) => prev.has(id))));
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
  const items: any[] = data?.items ?? [];
  const open = (d: ChannelDialog) => setDialog(d);
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
            <button type="button" class="secondary" onClick={() => confirm(t('confirm_delete_disabled')) && act(() => api.call('G15'), true)}>
              {t('delete_disabled')}
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
        {filters.tag_mode && <p class="muted">{t('tag_mode_hint')}</p>}
      </section>
      {notice && <Notice>{notice}</Notice>}
      {result && <Figures data={result} label={t('result')} />}
      <ErrorBox error={error} />
      {selected.size > 0 && <BatchBar ids={[...selected]} act={act} clear={() => setSelected(new Set())} />}
      <table aria-busy={busy}>
        <thead>
          <tr>
            <th scope="col">
              <input type="checkbox" aria-label={t('select_page')} checked={items.length > 0 && items.every((c) => selected.has(c.id))} onChange={(e) => select(items.map((c) => c.id), e.currentTarget.checked)} />
            </th>
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
          {filters.tag_mode
            ? byTag(items).map(([tag, channels]) => <TagRows tag={tag} channels={channels} selected={selected} select={select} act={act} open={open} />)
            : items.map((c) => <ChannelRow c={c} selected={selected.has(c.id)} onSelect={(on) => select([c.id], on)} act={act} open={open} />)}
        </tbody>
      </table>
      {data && items.length === 0 && <p class="muted">{t('none')}</p>}
      <Pager page={page} total={data?.total ?? 0} pageSize={filters.page_size} label={t('channels')} onPage={setPage} />
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
      {dialog?.kind === 'tag' && (
        <TagEdit
          tag={dialog.tag}
          onClose={() => setDialog(null)}
          onSaved={(m) => {
            setDialog(null);
            setNotice(m);
            void load();
          }}
        />
      )}
      {dialog?.kind === 'keys' && <MultiKeys id={dialog.id} onClose={() => (setDialog(null), void load())} />}
    </>
  );
}
