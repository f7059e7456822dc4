// The admin page, shown to admins only: the user list (AdminUsers.tsx, AS05–AS08), then the tools for one
// user opened from it or by id: the user's linked accounts (A20) with unlinking (A21), clearing a binding by
// type (A19), turning off two-factor (A18) and resetting the passkey (A22); two-factor statistics (A16).
// Every change asks first in the console's own dialog.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, Select, useAction, useConfirm } from '../shared/ui';
import { api } from './session';
import { t } from './texts';
import { providerName } from './Sessions';
import { UserList } from './AdminUsers';
import { UserPanel } from './admin/UserPanel';

/** The binding types A19 clears: the email address and the built-in providers. */
const BINDING_TYPES = ['email', 'github', 'discord', 'oidc', 'linuxdo', 'wechat', 'telegram'];
const bindingName = (b: string) => (b === 'email' ? t('binding_email') : b === 'wechat' ? t('method_wechat') : providerName(b));

function TwoFactorStats() {
  const [stats, setStats] = useState<any>(null);
  const { error, run } = useAction();
  useEffect(() => void run(async () => setStats(await api.call('A16'))), []);
  return (
    <section class="card" aria-labelledby="stats-title">
      <h2 id="stats-title">{t('admin_stats')}</h2>
      {stats && (
        <dl class="figures">
          {(['total_users', 'enabled_users', 'enabled_rate'] as const).map((k) => (
            <div data-key={k}>
              <dt>{t(`admin_${k}`)}</dt>
              <dd>{String(stats[k])}</dd>
            </div>
          ))}
        </dl>
      )}
      <ErrorBox error={error} />
    </section>
  );
}

function UserActions({ id, username, onChanged, onGone }: { id: number; username?: string; onChanged: () => void; onGone: () => void }) {
  const [bindings, setBindings] = useState<any[] | null>(null);
  const { ask, dialog } = useConfirm();
  const heading = useRef<HTMLHeadingElement>(null);
  const [type, setType] = useState(BINDING_TYPES[0]!);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const load = () => run(async () => setBindings(await api.call('A20', { params: { id } })));
  useEffect(() => {
    setNotice('');
    setBindings(null);
    void load();
    heading.current?.focus();
  }, [id]);
  /** Asks first (the console's dialog), runs the operation, shows its message and reads the bindings again. */
  const act = async (question: string, f: () => Promise<string>) => {
    if (!(await ask({ title: t('admin_user', { id }), message: question, confirm: t('confirm'), cancel: t('cancel'), danger: true }))) return;
    await run(async () => {
      setNotice(await f());
      await load();
    });
  };
  const unlink = (b: any) => act(t('admin_confirm_unlink', { name: b.provider_name, id }), async () => (await api.call('A21', { params: { id, provider_id: b.provider_id } }), t('admin_unlinked', { name: b.provider_name })));
  const clear = () => act(t('admin_confirm_clear', { type: bindingName(type), id }), async () => t('admin_cleared', { type: bindingName(type), username: (await api.call('A19', { params: { id, binding_type: type } })).username }));
  const twofa = () => act(t('admin_confirm_2fa', { id }), async () => (await api.call('A18', { params: { id } }), t('admin_2fa_off', { id })));
  const passkey = () => act(t('admin_confirm_passkey', { id }), async () => t('admin_passkey_reset', { username: (await api.call('A22', { params: { id } })).username }));
  return (
    <section class="card" aria-labelledby="user-title">
      <h2 id="user-title" ref={heading} tabIndex={-1}>
        {username ? t('admin_user_named', { id, username }) : t('admin_user', { id })}
      </h2>
      <UserPanel id={id} onChanged={onChanged} onGone={onGone} />
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      <h3>{t('bindings')}</h3>
      {bindings && bindings.length === 0 && <p class="muted">{t('no_bindings')}</p>}
      <ul class="plain-list">
        {(bindings ?? []).map((b) => (
          <li class="row" data-provider={b.provider_id}>
            <strong>{b.provider_name}</strong> <span class="muted">{b.provider_user_id}</span>
            <button type="button" class="link" disabled={busy} onClick={() => unlink(b)}>
              {t('unbind')}
            </button>
          </li>
        ))}
      </ul>
      <div class="row">
        <Select label={t('admin_binding_type')} value={type} onChange={(e) => setType(e.currentTarget.value)} options={BINDING_TYPES.map((b) => [b, bindingName(b)])} />
        <button type="button" class="secondary" disabled={busy} onClick={clear}>
          {t('admin_clear')}
        </button>
      </div>
      <h3>{t('admin_factors')}</h3>
      <div class="row">
        <button type="button" class="danger" disabled={busy} onClick={twofa}>
          {t('admin_2fa')}
        </button>
        <button type="button" class="danger" disabled={busy} onClick={passkey}>
          {t('admin_passkey')}
        </button>
      </div>
      {dialog}
    </section>
  );
}

export function AdminUserPage() {
  const [input, setInput] = useState('');
  const [open, setOpen] = useState<{ id: number; username?: string } | null>(null);
  const [version, setVersion] = useState(0);
  return (
    <>
      <UserList openId={open?.id ?? null} version={version} onOpen={(u) => setOpen({ id: u.id, username: u.username })} />
      {open && <UserActions id={open.id} username={open.username} onChanged={() => setVersion((v) => v + 1)} onGone={() => setOpen(null)} />}
      <section class="card" aria-labelledby="lookup-title">
        <h2 id="lookup-title">{t('admin_lookup')}</h2>
        <p class="muted">{t('admin_users_hint')}</p>
        <form class="row" onSubmit={(e) => (e.preventDefault(), setOpen({ id: Number(input) }))}>
          <Field label={t('admin_user_id')} type="number" min={1} required value={input} onInput={(e) => setInput(e.currentTarget.value)} />
          <button type="submit">{t('admin_open')}</button>
        </form>
      </section>
      <TwoFactorStats />
    </>
  );
}
