// The admin user list (AS05 all users, AS06 search with role and status filters), newest first and paged,
// with each user's role, status, group, balance, two-factor, passkeys and last sign-in; creating a user
// (AS18). A row opens the per-user tools of AdminUser.tsx; disabling (AS08, every session of the user ends)
// asks first in the console's own dialog. A row offers only what the server allows (admin/powers.ts).
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, Select, formatTime, useAction, useConfirm } from '../shared/ui';
import { api, useSession } from './session';
import { t } from './texts';
import { Money } from './widgets';
import { powersOver } from './admin/powers';
import { CreateUser } from './admin/CreateUser';

const PAGE_SIZE = 10;
const ROLES = ['1', '10', '100'];
const STATUSES = ['1', '2'];

export interface ListedUser {
  id: number;
  username: string;
  display_name: string;
  email: string;
  role: number;
  status: number;
  twofa_enabled: boolean;
  passkey_count: number;
  last_login_at: number;
  created_at: number;
  group: string;
  quota: number;
}

interface Filters {
  keyword: string;
  role: string;
  status: string;
}

export const roleName = (role: number) => (ROLES.includes(String(role)) ? t(`role_${role}`) : String(role));

export function UserList(props: { onOpen: (u: ListedUser) => void; openId: number | null; version: number }) {
  const me = useSession().user!;
  const [creating, setCreating] = useState(false);
  const [draft, setDraft] = useState<Filters>({ keyword: '', role: '', status: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  const [page, setPage] = useState(1);
  const [data, setData] = useState<{ items: ListedUser[]; total: number } | null>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const { ask, dialog } = useConfirm();

  const load = () =>
    run(async () => {
      const paging = { p: page, page_size: PAGE_SIZE };
      const filtered = filters.keyword.trim() || filters.role || filters.status;
      const d = filtered
        ? await api.call('AS06', {
            query: {
              ...paging,
              ...(filters.keyword.trim() ? { keyword: filters.keyword.trim() } : {}),
              ...(filters.role ? { role: Number(filters.role) } : {}),
              ...(filters.status ? { status: Number(filters.status) } : {}),
            },
          })
        : await api.call('AS05', { query: paging });
      setData(d as any);
    });
  useEffect(() => void load(), [page, filters, props.version]);

  const manage = async (u: ListedUser, action: 'disable' | 'enable') => {
    if (action === 'disable') {
      const ok = await ask({
        title: t('admin_confirm_disable_title', { username: u.username }),
        message: t('admin_confirm_disable'),
        confirm: t('admin_disable'),
        cancel: t('cancel'),
        danger: true,
      });
      if (!ok) return;
    }
    setNotice('');
    await run(async () => {
      await api.call('AS08', { body: { id: u.id, action } });
      setNotice(t(action === 'disable' ? 'admin_disabled_done' : 'admin_enabled_done', { username: u.username }));
    });
    await load();
  };

  const pages = data ? Math.max(1, Math.ceil(data.total / PAGE_SIZE)) : 1;
  return (
    <section class="card" aria-labelledby="list-title">
      <div class="row spread">
        <h2 id="list-title">{t('admin_list')}</h2>
        <button type="button" onClick={() => setCreating(true)}>
          {t('au_create')}
        </button>
      </div>
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(1);
          setFilters({ ...draft });
        }}
      >
        <Field label={t('admin_search')} hint={t('admin_search_hint')} type="search" maxLength={100} value={draft.keyword} onInput={(e) => setDraft({ ...draft, keyword: e.currentTarget.value })} />
        <Select label={t('admin_role')} value={draft.role} onChange={(e) => setDraft({ ...draft, role: e.currentTarget.value })} options={[['', t('role_any')], ...ROLES.map((r): [string, string] => [r, t(`role_${r}`)])]} />
        <Select label={t('admin_status')} value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value })} options={[['', t('status_any')], ...STATUSES.map((s): [string, string] => [s, t(`status_${s}`)])]} />
        <button type="submit" disabled={busy}>
          {t('admin_search_btn')}
        </button>
      </form>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      {data && data.items.length === 0 && <p class="muted">{t('admin_no_users')}</p>}
      {data && data.items.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-labelledby="list-title">
          <table class="user-list">
            <thead>
              <tr>
                <th scope="col">{t('col_id')}</th>
                <th scope="col">{t('col_user')}</th>
                <th scope="col">{t('email')}</th>
                <th scope="col">{t('admin_role')}</th>
                <th scope="col">{t('admin_status')}</th>
                <th scope="col">{t('pf_group')}</th>
                <th scope="col">{t('w_balance')}</th>
                <th scope="col">{t('twofa_short')}</th>
                <th scope="col">{t('col_passkeys')}</th>
                <th scope="col">{t('col_last_login')}</th>
                <th scope="col">{t('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((u) => {
                const p = powersOver(me, u);
                return (
                <tr data-user={u.username} aria-current={props.openId === u.id ? 'true' : undefined}>
                  <td class="num">{u.id}</td>
                  <td>
                    <strong>{u.username}</strong>
                    {u.display_name && u.display_name !== u.username && <div class="muted small">{u.display_name}</div>}
                  </td>
                  <td class="small">{u.email || '—'}</td>
                  <td data-col="role">{roleName(u.role)}</td>
                  <td data-col="status">
                    <span class={`badge ${u.status === 1 ? 'on' : 'off'}`}>{STATUSES.includes(String(u.status)) ? t(`status_${u.status}`) : String(u.status)}</span>
                  </td>
                  <td data-col="group">{u.group}</td>
                  <td class="num" data-col="balance">
                    <Money units={u.quota} />
                  </td>
                  <td data-col="twofa">{u.twofa_enabled ? t('yes_on') : t('no_off')}</td>
                  <td class="num" data-col="passkeys">{u.passkey_count}</td>
                  <td class="small nowrap">{u.last_login_at ? formatTime(u.last_login_at) : t('never')}</td>
                  <td class="nowrap">
                    <div class="row">
                      {p.view && (
                        <button type="button" class="secondary" aria-label={t('admin_manage_user', { username: u.username })} onClick={() => props.onOpen(u)}>
                          {t('admin_manage')}
                        </button>
                      )}
                      {u.status === 1 ? (
                        <button type="button" class="danger" disabled={busy || !p.disable} aria-label={t('admin_disable_user', { username: u.username })} onClick={() => manage(u, 'disable')}>
                          {t('admin_disable')}
                        </button>
                      ) : (
                        <button type="button" disabled={busy || !p.enable} aria-label={t('admin_enable_user', { username: u.username })} onClick={() => manage(u, 'enable')}>
                          {t('admin_enable')}
                        </button>
                      )}
                    </div>
                  </td>
                </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {data && (
        <div class="pager">
          <button type="button" class="secondary" disabled={busy || page <= 1} onClick={() => setPage(page - 1)}>
            {t('prev')}
          </button>
          <span aria-live="polite" data-testid="page-info">
            {t('admin_page_of', { page, pages, total: data.total })}
          </span>
          <button type="button" class="secondary" disabled={busy || page >= pages} onClick={() => setPage(page + 1)}>
            {t('next')}
          </button>
        </div>
      )}
      {creating && (
        <CreateUser
          myRole={me.role}
          onCancel={() => setCreating(false)}
          onDone={(username) => {
            setCreating(false);
            setNotice(t('au_created', { username }));
            setPage(1);
            setFilters({ keyword: '', role: '', status: '' });
          }}
        />
      )}
      {dialog}
    </section>
  );
}
