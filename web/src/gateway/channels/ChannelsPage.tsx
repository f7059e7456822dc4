import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../../shared/api';
import { ErrorBox, Field, Notice, Select, useAction, useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Pager } from '../widgets';
import './channels.css';
import { ChannelForm } from './ChannelForm';
import { ChannelRow } from './ChannelRow';
import { BatchBar } from './BatchBar';
import { COLUMNS, useColumns } from './columns';
import { Channels, type ChannelDialog, type ChannelsContext, type TestOutcome } from './context';
import { duration, explain, number, testMessage, typeName, typeOptions } from './format';
import { MultiKeys, RevealKey } from './Keys';
import { TagRows } from './TagRows';
import { TagEdit } from './TagEdit';

const FILTERS = { keyword: '', status: '', type: '', group: '', model: '', sort_by: '', sort_order: 'desc', tag_mode: false, page_size: 10 };

/** Channels of one page grouped by tag, in the order the server sent them (tag mode sorts by tag). */
function byTag(items: any[]) {
  const groups = new Map<string, any[]>();
  for (const c of items) groups.set(c.tag ?? '', [...(groups.get(c.tag ?? '') ?? []), c]);
  return [...groups];
}

const label = (c: any) => c.name || `#${c.id}`;

/** Which optional columns show: a list of check boxes remembered in this browser. */
function ColumnChooser({ columns }: { columns: ReturnType<typeof useColumns> }) {
  const ref = useRef<HTMLDetailsElement>(null);
  // A click elsewhere or Escape folds the list, as a menu does.
  useEffect(() => {
    const close = (e: Event) => {
      const d = ref.current;
      if (d?.open && (e.type === 'keydown' ? (e as KeyboardEvent).key === 'Escape' : !d.contains(e.target as Node))) d.open = false;
    };
    document.addEventListener('click', close);
    document.addEventListener('keydown', close);
    return () => {
      document.removeEventListener('click', close);
      document.removeEventListener('keydown', close);
    };
  }, []);
  return (
    <details class="columns-menu" ref={ref}>
      <summary>{t('columns')}</summary>
      <fieldset class="plain">
        <legend class="sr-only">{t('columns')}</legend>
        {COLUMNS.map((k) => (
          <label class="row">
            <input type="checkbox" name={`col_${k}`} checked={columns.shown(k)} onChange={(e) => columns.toggle(k, e.currentTarget.checked)} /> {t(`col_${k}`)}
          </label>
        ))}
        <button type="button" class="link" onClick={columns.reset}>
          {t('columns_reset')}
        </button>
      </fieldset>
    </details>
  );
}

/**
 * G01 (list) or G27 (search, when a keyword is given): server-side paging, filters, sort, tag mode, batch
 * actions and the channels' health (response time, balance, last test, used quota, why a channel was
 * disabled); priority and weight are edited in place; tests mark their row at once.
 */
export function ChannelsPage() {
  const [draft, setDraft] = useState(FILTERS);
  const [filters, setFilters] = useState(FILTERS);
  const [page, setPage] = useState(1);
  const [data, setData] = useState<any>(null);
  const [dialog, setDialog] = useState<ChannelDialog>(null);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [tests, setTests] = useState<Map<number, TestOutcome>>(new Map());
  const [pending, setPending] = useState<Set<number>>(new Set());
  const [notice, setNotice] = useState('');
  const [alert, setAlert] = useState<{ message: string; code?: string | null } | null>(null);
  const columns = useColumns();
  const confirm = useConfirm();
  const { busy, error, run } = useAction();
  const select = (ids: number[], on: boolean) =>
    setSelected((prev) => {
      const next = new Set(prev);
      for (const id of ids) on ? next.add(id) : next.delete(id);
      return next;
    });
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
      // The rows are drawn in the mode they were read in (not the filter's, which changes before they arrive).
      setData({ ...d, tagMode: filters.tag_mode });
      // A selection keeps only the channels still on the page (after a delete, copy or re-read).
      setSelected((prev) => new Set(d.items.map((c: any) => c.id).filter((id: number) => prev.has(id))));
    });
  useEffect(() => void load(), [filters, page]);
  const begin = () => {
    setNotice('');
    setAlert(null);
  };
  /** A page or batch action; its answer's message (when it returns one) replaces "Done.". */
  const act = (f: () => Promise<unknown>) =>
    run(async () => {
      begin();
      const r = await f();
      setNotice(typeof r === 'string' ? r : t('done'));
      await load();
    });
  /** A row action: its outcome is reported with the channel's name; `failed` words a failure. */
  const rowAct = async (c: any, f: () => Promise<string>, failed: (message: string) => string) => {
    begin();
    setPending((p) => new Set(p).add(c.id));
    try {
      setNotice(await f());
      await load();
    } catch (e) {
      const x = explain(e);
      setAlert({ message: failed(x.message), code: x.code });
    } finally {
      setPending((p) => {
        const next = new Set(p);
        next.delete(c.id);
        return next;
      });
    }
  };
  const ctx: ChannelsContext = {
    columns: columns.visible,
    selected,
    select,
    tests,
    pending,
    act,
    open: setDialog,
    test: (c) =>
      rowAct(
        c,
        async () => {
          try {
            const d = await api.call('G34', { params: { id: c.id } });
            setTests((m) => new Map(m).set(c.id, { ok: true, ms: d?.response_time, model: d?.model, at: Date.now() }));
            return t('test_ok', { name: label(c), time: duration(d?.response_time), model: d?.model ?? '' });
          } catch (e) {
            // The row is marked at once, before the message is shown.
            const data = e instanceof ApiError ? (e.data as any) : null;
            const message = testMessage(e);
            setTests((m) => new Map(m).set(c.id, { ok: false, message, code: e instanceof ApiError ? e.code : null, upstreamStatus: data?.upstream_status ?? null, model: data?.model, at: Date.now() }));
            throw new ApiError(message, e instanceof ApiError ? e.code : 'HTTP_ERROR', 200);
          }
        },
        (message) => t('test_failed_named', { name: label(c), message }),
      ),
    balance: (c) =>
      rowAct(
        c,
        async () => {
          const d = await api.call('G36', { params: { id: c.id } });
          return t('balance_ok', { name: label(c), balance: number(Number(d?.balance ?? 0)), currency: d?.currency ?? '' });
        },
        (message) => t('balance_failed', { name: label(c), message }),
      ),
    copy: (c) =>
      rowAct(
        c,
        async () => {
          const d = await api.call('G14', { params: { id: c.id }, query: { suffix: t('copy_suffix') } });
          return t('copied_channel', { name: label(c), copy: d?.name ?? '', id: d?.id ?? '' });
        },
        (message) => t('action_failed', { name: label(c), message }),
      ),
    toggle: (c) =>
      rowAct(
        c,
        async () => {
          await api.call('G11', { params: { id: c.id }, body: { status: c.status === 1 ? 2 : 1 } });
          return t(c.status === 1 ? 'disabled_named' : 'enabled_named', { name: label(c) });
        },
        (message) => t('action_failed', { name: label(c), message }),
      ),
    remove: async (c) => {
      const ok = await confirm.ask({ title: t('confirm_delete_one_title'), message: t('confirm_delete', { id: c.id, name: label(c) }), confirm: t('delete'), cancel: t('cancel'), danger: true });
      if (!ok) return;
      await rowAct(
        c,
        async () => {
          await api.call('G04', { params: { id: c.id } });
          return t('deleted_named', { name: label(c) });
        },
        (message) => t('action_failed', { name: label(c), message }),
      );
    },
    patch: (id, values) => setData((d: any) => (d ? { ...d, items: d.items.map((c: any) => (c.id === id ? { ...c, ...values } : c)) } : d)),
  };
  const search = (e: Event) => {
    e.preventDefault();
    setPage(1);
    setFilters({ ...draft });
  };
  const set = (k: keyof typeof FILTERS) => (e: any) => setDraft({ ...draft, [k]: e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value });
  const deleteDisabled = async () => {
    const ok = await confirm.ask({ title: t('confirm_delete_disabled_title'), message: t('confirm_delete_disabled'), confirm: t('delete'), cancel: t('cancel'), danger: true });
    if (ok) act(async () => t('deleted_n', { n: Number(await api.call('G15')) || 0 }));
  };
  const items: any[] = data?.items ?? [];
  const failedTests = items.filter((c) => tests.get(c.id)?.ok === false).length;
  return (
    <Channels.Provider value={ctx}>
      <section class="card" aria-labelledby="filters-title">
        <h2 id="filters-title">{t('channels')}</h2>
        <form onSubmit={search} role="search">
          <div class="row">
            <Field label={t('keyword')} name="keyword" type="search" value={draft.keyword} onInput={set('keyword')} />
            <Select label={t('status')} name="status" value={draft.status} onChange={set('status')} options={[['', t('any')], ['1', t('st_1')], ['2', t('st_2')], ['3', t('st_3')]]} />
            <Select label={t('type')} name="type" value={draft.type} onChange={set('type')} options={[['', t('any')], ...typeOptions()]} />
            <Field label={t('group')} name="group" value={draft.group} onInput={set('group')} />
            <Field label={t('model')} name="model" value={draft.model} onInput={set('model')} />
          </div>
          <div class="row">
            <Select label={t('sort')} name="sort_by" value={draft.sort_by} onChange={set('sort_by')} options={[['', t('priority')], ['id', t('id')], ['name', t('name')], ['balance', t('balance')], ['response_time', t('col_response_time')], ['test_time', t('col_last_test')]]} />
            <Select label={t('order')} name="sort_order" value={draft.sort_order} onChange={set('sort_order')} options={[['desc', t('desc')], ['asc', t('asc')]]} />
            <Select label={t('page_size')} name="page_size" value={String(draft.page_size)} onChange={(e) => setDraft({ ...draft, page_size: Number(e.currentTarget.value) })} options={[['10', '10'], ['20', '20'], ['50', '50'], ['100', '100']]} />
            <label class="row">
              <input type="checkbox" name="tag_mode" checked={draft.tag_mode} onChange={set('tag_mode')} /> {t('tag_mode')}
            </label>
          </div>
          <div class="row">
            <button type="submit">{t('search')}</button>
            <button type="button" class="secondary" onClick={() => setDialog({ kind: 'form', id: null })}>
              {t('new_channel')}
            </button>
            <button type="button" class="secondary" onClick={deleteDisabled}>
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
      {alert && (
        <div class="alert" role="alert">
          {alert.message}
          {alert.code && <code class="code">{alert.code}</code>}
        </div>
      )}
      <ErrorBox error={error} />
      {selected.size > 0 && (
        <BatchBar
          ids={[...selected]}
          act={act}
          clear={() => setSelected(new Set())}
          confirmDelete={() => confirm.ask({ title: t('confirm_delete_title'), message: t('confirm_batch_delete', { n: selected.size }), confirm: t('delete'), cancel: t('cancel'), danger: true })}
        />
      )}
      <div class="row spread table-tools">
        <span class="muted small">{failedTests > 0 ? t('n_failed_tests', { n: failedTests }) : t('inline_hint')}</span>
        <ColumnChooser columns={columns} />
      </div>
      <div class="table-scroll" tabIndex={0} role="region" aria-label={t('channel_table')}>
        <table class="channels" aria-busy={busy}>
          <thead>
            <tr>
              <th scope="col">
                <input type="checkbox" aria-label={t('select_page')} checked={items.length > 0 && items.every((c) => selected.has(c.id))} onChange={(e) => select(items.map((c) => c.id), e.currentTarget.checked)} />
              </th>
              <th scope="col">{t('name')}</th>
              {columns.visible.map((k) => (
                <th scope="col" class={`col-${k}`}>
                  {t(`col_${k}`)}
                </th>
              ))}
              <th scope="col" class="actions-cell">
                {t('actions')}
              </th>
            </tr>
          </thead>
          <tbody>{data?.tagMode ? byTag(items).map(([tag, channels]) => <TagRows tag={tag} channels={channels} />) : items.map((c) => <ChannelRow c={c} />)}</tbody>
        </table>
      </div>
      {data && items.length === 0 && <p class="muted">{t('none')}</p>}
      <Pager page={page} total={data?.total ?? 0} pageSize={filters.page_size} label={t('channels')} onPage={setPage} />
      {dialog?.kind === 'form' && (
        <ChannelForm
          id={dialog.id}
          onClose={() => setDialog(null)}
          onSaved={(m) => {
            setDialog(null);
            begin();
            setNotice(m);
            void load();
          }}
        />
      )}
      {dialog?.kind === 'reveal' && <RevealKey id={dialog.id} name={dialog.name} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'tag' && (
        <TagEdit
          tag={dialog.tag}
          onClose={() => setDialog(null)}
          onSaved={(m) => {
            setDialog(null);
            begin();
            setNotice(m);
            void load();
          }}
        />
      )}
      {dialog?.kind === 'keys' && <MultiKeys id={dialog.id} name={dialog.name} onClose={() => (setDialog(null), void load())} />}
      {confirm.dialog}
    </Channels.Provider>
  );
}
