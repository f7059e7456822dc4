// Top-up codes for admins: create a batch (AS11: name, amount in USD, count, expiry) whose keys are shown this
// once with copy and export; the list (AS09, AS10 search) with status and who redeemed each; disable or
// enable (AS12) and delete (AS13) after the console's own confirmation.
import { useEffect, useState } from 'preact/hooks';
import { CopyButton, Dialog, ErrorBox, Field, FormActions, Notice, formatTime, useAction, useConfirm } from '../../shared/ui';
import type { TopupCode } from '../../generated/account-api';
import { api } from '../session';
import { csvLine, download, secondsOf, unitsOf, UNITS_PER_USD } from '../format';
import { t } from '../texts';
import { Money, Pager, TableBox } from '../widgets';

const PAGE_SIZE = 10;
const STATUS_CLASS: Record<number, string> = { 1: 'on', 2: 'off', 3: '' };

interface Batch {
  name: string;
  quota: number;
  expires: number;
  keys: string[];
}

function NewCodes(props: { onDone: (b: Batch) => void; onCancel: () => void }) {
  const [d, setD] = useState({ name: '', amount: '', count: '1', expires: '' });
  const { busy, error, setError, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const quota = unitsOf(d.amount);
    if (!Number.isFinite(quota) || quota < 1) return setError(new Error(t('au_amount_invalid')));
    const expires = d.expires ? (secondsOf(d.expires) ?? 0) : 0;
    void run(async () => {
      const keys = await api.call('AS11', { body: { name: d.name.trim(), quota, count: Number(d.count), expired_time: expires } });
      props.onDone({ name: d.name.trim(), quota, expires, keys });
    });
  };
  return (
    <Dialog title={t('c_new')} onClose={props.onCancel}>
      <form onSubmit={submit}>
        <Field label={t('c_name')} name="name" required maxLength={20} value={d.name} onInput={(e) => setD({ ...d, name: e.currentTarget.value })} />
        <Field label={t('c_amount')} name="amount" type="number" min={0.01} step="0.01" inputMode="decimal" required value={d.amount} onInput={(e) => setD({ ...d, amount: e.currentTarget.value })} />
        <Field label={t('c_count')} name="count" type="number" min={1} max={100} required value={d.count} onInput={(e) => setD({ ...d, count: e.currentTarget.value })} />
        <Field label={t('c_expires')} name="expires" type="datetime-local" value={d.expires} hint={t('c_expires_hint')} onInput={(e) => setD({ ...d, expires: e.currentTarget.value })} />
        <FormActions error={error} submit={t('c_create')} disabled={busy} cancel={t('cancel')} onCancel={props.onCancel} />
      </form>
    </Dialog>
  );
}

function BatchShown({ batch, onClose }: { batch: Batch; onClose: () => void }) {
  const text = batch.keys.join('\n');
  const csv = () =>
    [csvLine(['name', 'key', 'amount_usd', 'units', 'expires']), ...batch.keys.map((k) => csvLine([batch.name, k, (batch.quota / UNITS_PER_USD).toFixed(2), batch.quota, batch.expires ? new Date(batch.expires * 1000).toISOString() : '']))].join('\r\n') + '\r\n';
  return (
    <Dialog title={t('c_created_title', { n: batch.keys.length, name: batch.name })} onClose={onClose}>
      <div class="notice" role="status">
        {t('c_shown_once')}
      </div>
      <pre class="snippet codes-list" data-testid="new-codes">
        <code>{text}</code>
      </pre>
      <div class="row">
        <CopyButton text={text} label={t('c_copy_all')} copied={t('copied')} failed={t('copy_failed')} />
        <button type="button" class="secondary" onClick={() => download(`codes-${batch.name}.csv`, csv(), 'text/csv')}>
          {t('c_export_csv')}
        </button>
        <button type="button" class="secondary" onClick={() => download(`codes-${batch.name}.txt`, text + '\n')}>
          {t('c_export_txt')}
        </button>
        <button type="button" onClick={onClose}>
          {t('key_saved_close')}
        </button>
      </div>
    </Dialog>
  );
}

export function CodesPage() {
  const [page, setPage] = useState(1);
  const [keyword, setKeyword] = useState('');
  const [search, setSearch] = useState('');
  const [version, setVersion] = useState(0);
  const [data, setData] = useState<{ items: TopupCode[]; total: number } | null>(null);
  const [names, setNames] = useState<Map<number, string>>(new Map());
  const [creating, setCreating] = useState(false);
  const [batch, setBatch] = useState<Batch | null>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const { ask, dialog } = useConfirm();

  const load = () =>
    run(async () => {
      const query = { p: page, page_size: PAGE_SIZE };
      const d = search ? await api.call('AS10', { query: { ...query, keyword: search } }) : await api.call('AS09', { query });
      setData(d);
      // Who redeemed: the user list answers any user by id (AS06); a deleted user stays a number.
      const ids = [...new Set(d.items.map((c) => c.used_user_id).filter((id) => id > 0 && !names.has(id)))];
      const found = new Map(names);
      for (const id of ids) {
        const u = (await api.call('AS06', { query: { keyword: String(id), page_size: 100 } })).items.find((x) => x.id === id);
        if (u) found.set(id, u.username);
      }
      setNames(found);
    });
  useEffect(() => void load(), [page, search, version]);

  const setStatus = (c: TopupCode, status: 1 | 2) =>
    run(async () => {
      await api.call('AS12', { query: { status_only: 'true' }, body: { id: c.id, status } });
      setNotice(t(status === 1 ? 'c_enabled_done' : 'c_disabled_done', { name: c.name }));
      await load();
    });
  const remove = async (c: TopupCode) => {
    if (!(await ask({ title: t('c_delete_title', { name: c.name }), message: t('c_delete_text'), confirm: t('delete'), cancel: t('cancel'), danger: true }))) return;
    await run(async () => {
      await api.call('AS13', { params: { id: c.id } });
      setNotice(t('c_deleted_done', { name: c.name }));
      await load();
    });
  };

  return (
    <section class="card" aria-labelledby="codes-title">
      <div class="row spread">
        <h2 id="codes-title">{t('codes')}</h2>
        <button type="button" onClick={() => setCreating(true)}>
          {t('c_new')}
        </button>
      </div>
      <form class="row" role="search" onSubmit={(e) => (e.preventDefault(), setPage(1), setSearch(keyword.trim()), setVersion(version + 1))}>
        <Field label={t('c_search')} type="search" name="keyword" maxLength={100} value={keyword} onInput={(e) => setKeyword(e.currentTarget.value)} />
        <button type="submit" class="secondary" disabled={busy}>
          {t('search')}
        </button>
      </form>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      {data && data.items.length === 0 && <p class="muted">{t('c_none')}</p>}
      {data && data.items.length > 0 && (
        <TableBox label={t('codes')}>
          <table class="codes-table">
            <thead>
              <tr>
                <th scope="col">{t('col_id')}</th>
                <th scope="col">{t('c_name')}</th>
                <th scope="col">{t('key_key')}</th>
                <th scope="col">{t('c_amount_short')}</th>
                <th scope="col">{t('status')}</th>
                <th scope="col">{t('c_redeemed_by')}</th>
                <th scope="col">{t('c_expires_short')}</th>
                <th scope="col">{t('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((c) => (
                <tr data-id={c.id} data-code-name={c.name}>
                  <td class="num">{c.id}</td>
                  <td>{c.name}</td>
                  <td>
                    <code class="small">{c.key}</code>
                  </td>
                  <td class="num">
                    <Money units={c.quota} />
                  </td>
                  <td data-col="status">
                    <span class={`badge ${STATUS_CLASS[c.status] ?? ''}`}>{t(`c_status_${c.status}`)}</span>
                  </td>
                  <td class="small" data-col="redeemer">
                    {c.used_user_id ? (
                      <>
                        {names.get(c.used_user_id) ?? `#${c.used_user_id}`}
                        <div class="muted">{formatTime(c.redeemed_time)}</div>
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td class="small nowrap">{c.expired_time ? formatTime(c.expired_time) : t('key_never_expires')}</td>
                  <td>
                    <div class="row nowrap-row">
                      {c.status === 1 && (
                        <button type="button" class="secondary" disabled={busy} aria-label={t('c_disable', { name: c.name, id: c.id })} onClick={() => setStatus(c, 2)}>
                          {t('disable')}
                        </button>
                      )}
                      {c.status === 2 && (
                        <button type="button" class="secondary" disabled={busy} aria-label={t('c_enable', { name: c.name, id: c.id })} onClick={() => setStatus(c, 1)}>
                          {t('enable')}
                        </button>
                      )}
                      <button type="button" class="danger" disabled={busy} aria-label={t('c_delete', { name: c.name, id: c.id })} onClick={() => remove(c)}>
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
      {creating && (
        <NewCodes
          onCancel={() => setCreating(false)}
          onDone={(b) => {
            setCreating(false);
            setBatch(b);
            setNotice('');
            if (page === 1 && !search) void load();
            else (setSearch(''), setKeyword(''), setPage(1));
          }}
        />
      )}
      {batch && <BatchShown batch={batch} onClose={() => setBatch(null)} />}
      {dialog}
    </section>
  );
}
