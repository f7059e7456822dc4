// The call log (the customer's AP10, every user's AS14 for admins): filters by key, model, kind and time
// (and user for admins), paged, and the filtered rows as a CSV file.
import { useEffect, useId, useState } from 'preact/hooks';
import { ErrorBox, Field, Select, formatTime, useAction } from '../../shared/ui';
import type { CustomerLog } from '../../generated/account-api';
import { api } from '../session';
import { count, csvLine, download, secondsOf, UNITS_PER_USD } from '../format';
import { t } from '../texts';
import { Money, Pager, TableBox } from '../widgets';

const PAGE_SIZE = 20;
const EXPORT_PAGE = 100;
/** The most rows one export fetches (50 pages of 100). */
const EXPORT_MAX = 5000;
const KINDS = ['2', '5', '0'] as const;

export interface LogFilters {
  kind: (typeof KINDS)[number];
  token: string;
  model: string;
  from: string;
  to: string;
  username: string;
}

export const NO_FILTERS: LogFilters = { kind: '2', token: '', model: '', from: '', to: '', username: '' };

function queryOf(f: LogFilters, admin: boolean) {
  return {
    type: Number(f.kind),
    token_name: f.token.trim() || undefined,
    model_name: f.model.trim() || undefined,
    start_timestamp: secondsOf(f.from),
    end_timestamp: secondsOf(f.to),
    ...(admin && f.username.trim() ? { username: f.username.trim() } : {}),
  };
}

function fetchPage(admin: boolean, f: LogFilters, p: number, size: number) {
  const query = { ...queryOf(f, admin), p, page_size: size };
  return admin ? api.call('AS14', { query }) : api.call('AP10', { query });
}

function csvOf(rows: CustomerLog[], admin: boolean): string {
  const head = ['time', ...(admin ? ['user'] : []), 'key', 'model', 'type', 'prompt_tokens', 'completion_tokens', 'cost_usd', 'units', 'duration_s', 'stream', 'request_id'];
  const lines = rows.map((r) =>
    csvLine([new Date(r.created_at * 1000).toISOString(), ...(admin ? [r.username] : []), r.token_name, r.model_name, r.type, r.prompt_tokens, r.completion_tokens, (r.quota / UNITS_PER_USD).toFixed(6), r.quota, r.use_time, r.is_stream, r.request_id]),
  );
  return [csvLine(head), ...lines].join('\r\n') + '\r\n';
}

export function CallLog(props: { admin?: boolean; models: string[]; keys?: string[]; initial?: Partial<LogFilters> }) {
  const admin = props.admin ?? false;
  const [draft, setDraft] = useState<LogFilters>({ ...NO_FILTERS, ...props.initial });
  const [filters, setFilters] = useState<LogFilters>(draft);
  const [page, setPage] = useState(1);
  const [data, setData] = useState<{ items: CustomerLog[]; total: number } | null>(null);
  const [exported, setExported] = useState('');
  const { busy, error, run } = useAction();
  const lists = useId();
  useEffect(() => void run(async () => setData(await fetchPage(admin, filters, page, PAGE_SIZE))), [filters, page]);

  const exportCsv = () =>
    run(async () => {
      const rows: CustomerLog[] = [];
      for (let p = 1; rows.length < EXPORT_MAX; p++) {
        const d = await fetchPage(admin, filters, p, EXPORT_PAGE);
        rows.push(...d.items);
        if (d.items.length < EXPORT_PAGE || rows.length >= d.total) break;
      }
      download(`usage-${new Date().toISOString().slice(0, 10)}.csv`, csvOf(rows, admin), 'text/csv');
      setExported(t('u_exported', { n: rows.length }));
    });
  const set = (patch: Partial<LogFilters>) => setDraft({ ...draft, ...patch });

  return (
    <section class="card" aria-labelledby="log-title">
      <h2 id="log-title">{t('u_log')}</h2>
      <form class="filters" role="search" onSubmit={(e) => (e.preventDefault(), setPage(1), setFilters({ ...draft }))}>
        {admin && <Field label={t('u_user')} name="username" maxLength={64} value={draft.username} onInput={(e) => set({ username: e.currentTarget.value })} />}
        <Field label={t('u_key')} name="token_name" list={`${lists}-keys`} maxLength={50} value={draft.token} onInput={(e) => set({ token: e.currentTarget.value })} />
        <Field label={t('u_model')} name="model_name" list={`${lists}-models`} maxLength={200} value={draft.model} onInput={(e) => set({ model: e.currentTarget.value })} />
        <Select label={t('u_kind')} name="kind" value={draft.kind} onChange={(e) => set({ kind: e.currentTarget.value as LogFilters['kind'] })} options={KINDS.map((k) => [k, t(`u_kind_${k}`)])} />
        <Field label={t('u_from')} name="from" type="datetime-local" value={draft.from} onInput={(e) => set({ from: e.currentTarget.value })} />
        <Field label={t('u_to')} name="to" type="datetime-local" value={draft.to} onInput={(e) => set({ to: e.currentTarget.value })} />
        <div class="row filter-actions">
          <button type="submit" disabled={busy}>
            {t('u_apply')}
          </button>
          <button type="button" class="secondary" disabled={busy || !data?.total} onClick={exportCsv}>
            {t('u_export')}
          </button>
        </div>
        <datalist id={`${lists}-keys`}>{(props.keys ?? []).map((k) => <option value={k} />)}</datalist>
        <datalist id={`${lists}-models`}>{props.models.map((m) => <option value={m} />)}</datalist>
      </form>
      {exported && (
        <p class="muted small" role="status">
          {exported}
        </p>
      )}
      <ErrorBox error={error} />
      {data && data.items.length === 0 && <p class="muted">{t('u_no_calls')}</p>}
      {data && data.items.length > 0 && (
        <TableBox label={t('u_log')}>
          <table class="call-log">
            <thead>
              <tr>
                <th scope="col">{t('u_time')}</th>
                {admin && <th scope="col">{t('u_user')}</th>}
                <th scope="col">{t('u_key')}</th>
                <th scope="col">{t('u_model')}</th>
                <th scope="col">{t('u_in')}</th>
                <th scope="col">{t('u_out')}</th>
                <th scope="col">{t('u_cost')}</th>
                <th scope="col">{t('u_duration')}</th>
                <th scope="col">{t('u_stream')}</th>
                <th scope="col">{t('status')}</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((r) => (
                <tr data-id={r.id} data-model={r.model_name} data-key-name={r.token_name}>
                  <td class="small nowrap">{formatTime(r.created_at)}</td>
                  {admin && <td>{r.username || `#${r.user_id}`}</td>}
                  <td>{r.token_name || '—'}</td>
                  <td class="model">{r.model_name || '—'}</td>
                  <td class="num">{count(r.prompt_tokens)}</td>
                  <td class="num">{count(r.completion_tokens)}</td>
                  <td class="num">
                    <Money units={r.quota} />
                  </td>
                  <td class="num">{t('u_seconds', { n: r.use_time })}</td>
                  <td>{r.is_stream ? t('yes') : t('no')}</td>
                  <td>
                    <span class={`badge ${r.type === 5 ? 'off' : r.type === 2 ? 'on' : ''}`} title={r.type === 5 ? r.content : undefined}>
                      {t(`log_type_${r.type}`)}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {data && data.total > PAGE_SIZE && <Pager page={page} size={PAGE_SIZE} total={data.total} busy={busy} onPage={setPage} />}
    </section>
  );
}
