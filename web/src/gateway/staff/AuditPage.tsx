import { useEffect, useState } from 'preact/hooks';
import { routes, summaries, type Operations } from '../../generated/gateway-api';
import { Field, formatTime, Select, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { auditTexts } from '../texts-audit';
import { Pager } from '../widgets';
import { RootOnly } from './StaffPage';
import { permissionName, roleName } from './format';
import './staff.css';

type AuditPageData = Operations['GS15']['data'];
type Entry = AuditPageData['items'][number];

const PAGE_SIZE = 20;
/** The actions the filter offers by name: every one the console has words for. */
const ACTIONS = Object.keys(auditTexts).map((k) => k.slice('act_'.length));

interface Filters {
  action: string;
  actor: string;
  channel: string;
  from: string;
  to: string;
}
const EMPTY: Filters = { action: '', actor: '', channel: '', from: '', to: '' };

/** An operation as words: by name, else by the registry's summary (English), else by its method and path. */
export function actionName(op: string): string {
  const known = t(`act_${op}`);
  if (!known.startsWith('act_')) return known;
  if (summaries[op]) return summaries[op];
  const route = (routes as Record<string, readonly [string, string]>)[op];
  return route ? t('act_other', { method: route[0], path: route[1] }) : op;
}

function detailValue(key: string, v: unknown): string {
  if (key === 'permission' && typeof v === 'string') return permissionName(v);
  if (key === 'permissions' && Array.isArray(v)) return v.map((p) => permissionName(String(p))).join(', ') || '—';
  if (key === 'expires_at') return v === null ? t('sf_never') : formatTime(Number(v));
  if (key === 'effect' && typeof v === 'string') return t(v === 'grant' ? 'sf_perm_grant' : v === 'deny' ? 'sf_perm_deny' : 'sf_perm_by_role_off');
  if (key === 'kind' && typeof v === 'string') return t(`sf_kind_${v}`);
  if (key === 'role' && typeof v === 'string') return roleName(v);
  if (typeof v === 'boolean') return v ? '✓' : '✗';
  if (Array.isArray(v)) return v.join(', ');
  if (v && typeof v === 'object') return JSON.stringify(v);
  return String(v ?? '—');
}

function Detail({ detail }: { detail: Record<string, unknown> }) {
  const entries = Object.entries(detail).filter(([k]) => k !== 'ok');
  if (!entries.length) return <span class="muted">—</span>;
  return (
    <ul class="audit-detail">
      {entries.map(([k, v]) => {
        const label = t(`au_f_${k}`);
        return (
          <li>
            {/* A field the page has no words for is shown as it is, as code. */}
            {label.startsWith('au_f_') ? <code>{k}</code> : label}: {label.startsWith('au_f_') ? <code>{detailValue(k, v)}</code> : detailValue(k, v)}
          </li>
        );
      })}
    </ul>
  );
}

const seconds = (local: string) => (local ? Math.floor(new Date(local).getTime() / 1000) : undefined);

/** GS15: the gateway audit log, newest first, filtered by action, actor, channel and time. */
export function AuditPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [page, setPage] = useState(1);
  const [data, setData] = useState<AuditPageData | null>(null);
  const { busy, error, run } = useAction();
  useEffect(() => {
    void run(async () => {
      const query = {
        p: page,
        page_size: PAGE_SIZE,
        action: filters.action || undefined,
        actor: filters.actor.trim() || undefined,
        channel_id: filters.channel ? Number(filters.channel) : undefined,
        start_time: seconds(filters.from),
        end_time: seconds(filters.to),
      };
      setData(await api.call('GS15', { query }));
    });
  }, [filters, page]);
  const set = (key: keyof Filters) => (e: Event) => setDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement).value });
  const apply = (e: Event) => {
    e.preventDefault();
    setPage(1);
    setFilters({ ...draft });
  };
  if (!data && error) {
    return (
      <>
        <h2 class="page-title">{t('au_title')}</h2>
        <RootOnly error={error} />
      </>
    );
  }
  const items: Entry[] = data?.items ?? [];
  return (
    <>
      <h2 class="page-title">{t('au_title')}</h2>
      <section class="card">
        <form onSubmit={apply} role="search" aria-label={t('au_filters')}>
          <div class="row">
            <Select label={t('au_action')} name="action" value={draft.action} onChange={set('action')} options={[['', t('au_any')], ...ACTIONS.map((a): [string, string] => [a, actionName(a)])]} />
            <Field label={t('au_actor')} hint={t('au_actor_hint')} name="actor" type="search" value={draft.actor} onInput={set('actor')} />
            <Field label={t('au_channel')} name="channel_id" type="number" min={1} inputMode="numeric" value={draft.channel} onInput={set('channel')} />
            <Field label={t('au_from')} name="from" type="datetime-local" value={draft.from} onInput={set('from')} />
            <Field label={t('au_to')} name="to" type="datetime-local" value={draft.to} onInput={set('to')} />
          </div>
          <div class="row">
            <button type="submit" disabled={busy}>
              {t('au_apply')}
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setDraft(EMPTY);
                setPage(1);
                setFilters(EMPTY);
              }}
            >
              {t('au_reset')}
            </button>
          </div>
        </form>
      </section>
      <section class="card" aria-labelledby="audit-title">
        <h2 id="audit-title">{t('au_table')}</h2>
        <RootOnly error={error} />
        {items.length > 0 && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label={t('au_table')}>
            <table class="staff-table audit-table">
              <thead>
                <tr>
                  <th scope="col">{t('au_time')}</th>
                  <th scope="col">{t('au_actor')}</th>
                  <th scope="col">{t('au_action')}</th>
                  <th scope="col">{t('au_channel')}</th>
                  <th scope="col">{t('au_detail')}</th>
                </tr>
              </thead>
              <tbody>
                {items.map((r) => (
                  <tr data-id={String(r.id)} data-operation={r.operation}>
                    <td data-label={t('au_time')}>{formatTime(r.created_at)}</td>
                    <td data-label={t('au_actor')}>{r.actor_name}</td>
                    <td data-label={t('au_action')}>{actionName(r.operation)}</td>
                    <td data-label={t('au_channel')}>{r.channel_id ?? '—'}</td>
                    <td data-label={t('au_detail')}>
                      <Detail detail={r.detail} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {data && items.length === 0 && <p class="muted">{t('none')}</p>}
        <Pager page={page} total={data?.total ?? 0} pageSize={PAGE_SIZE} label={t('au_table')} onPage={setPage} />
      </section>
    </>
  );
}
