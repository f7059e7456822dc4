// One user's account for an admin: role (AS08 promote/demote), status (disable/enable), group (AS20), a
// generated password (AS19, shown once) or a single-use reset link (AS21, shown once), soft delete (AS08), the balance set or adjusted with a reason (AS17),
// and the way to the user's usage. Only the actions the server allows this admin are offered (powers.ts).
import { useEffect, useState } from 'preact/hooks';
import { CopyButton, ErrorBox, Field, Notice, Select, formatTime, navigate, useAction, useConfirm } from '../../shared/ui';
import { api, useSession } from '../session';
import { count, unitsOf, usd } from '../format';
import { t } from '../texts';
import { Money } from '../widgets';
import { powersOver } from './powers';

export interface PanelUser {
  id: number;
  username: string;
  role: number;
  status: number;
  group: string;
  quota: number;
  used_quota: number;
  request_count: number;
}

function Balance({ user, onDone }: { user: PanelUser; onDone: (notice: string) => Promise<void> }) {
  const [mode, setMode] = useState<'add' | 'set'>('add');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const { busy, error, setError, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const units = unitsOf(amount);
    if (!Number.isFinite(units)) return setError(new Error(t('au_amount_invalid')));
    const quota = mode === 'add' ? user.quota + units : units;
    void run(async () => {
      const d = await api.call('AS17', { body: { id: user.id, quota, reason: reason.trim() } });
      setAmount('');
      setReason('');
      await onDone(t('au_balance_done', { username: user.username, amount: usd(d.quota) }));
    });
  };
  return (
    <form class="balance-form" onSubmit={submit} aria-labelledby="balance-title">
      <h3 id="balance-title">{t('au_balance')}</h3>
      <p>
        {t('w_balance')}: <Money units={user.quota} testid="user-balance" /> · {t('w_spent')}: <Money units={user.used_quota} /> · {t('u_calls')}: {count(user.request_count)}
      </p>
      <div class="row">
        <Select label={t('au_balance_mode')} name="mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as 'add' | 'set')} options={[['add', t('au_mode_add')], ['set', t('au_mode_set')]]} />
        <Field label={t('au_amount')} name="amount" type="number" step="0.01" inputMode="decimal" required value={amount} hint={mode === 'add' ? t('au_amount_add_hint') : undefined} onInput={(e) => setAmount(e.currentTarget.value)} />
        <Field label={t('au_reason')} name="reason" required maxLength={200} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {t('au_balance_btn')}
        </button>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}

export function UserPanel(props: { id: number; onChanged: () => void; onGone: () => void }) {
  const me = useSession().user!;
  const [user, setUser] = useState<PanelUser | null>(null);
  const [group, setGroup] = useState('');
  const [notice, setNotice] = useState('');
  // A new password or reset link, shown this once for the admin to hand over.
  const [handOver, setHandOver] = useState<{ text: string; value: string; testId: string } | null>(null);
  const { busy, error, run } = useAction();
  const { ask, dialog } = useConfirm();
  const load = async () => {
    const u = await api.call('AS07', { params: { id: props.id } });
    setUser(u);
    setGroup(u.group);
  };
  useEffect(() => {
    setNotice('');
    setHandOver(null);
    setUser(null);
    void run(load);
  }, [props.id]);
  if (!user) return <ErrorBox error={error} />;
  const p = powersOver(me, user);
  const done = async (text: string) => {
    setNotice(text);
    await load();
    props.onChanged();
  };
  const confirmThen = async (title: string, message: string, confirm: string, f: () => Promise<void>) => {
    if (!(await ask({ title, message, confirm, cancel: t('cancel'), danger: true }))) return;
    setNotice('');
    await run(f);
  };
  const manage = (action: 'promote' | 'demote' | 'disable' | 'enable') =>
    run(async () => {
      setNotice('');
      await api.call('AS08', { body: { id: user.id, action } });
      await done(t(`au_${action}_done`, { username: user.username }));
    });
  const remove = () =>
    confirmThen(t('au_delete_title', { username: user.username }), t('au_delete_text'), t('delete'), async () => {
      await api.call('AS08', { body: { id: user.id, action: 'delete' } });
      props.onChanged();
      props.onGone();
    });
  const resetPassword = () =>
    confirmThen(t('au_password_title', { username: user.username }), t('au_password_text'), t('au_password_btn'), async () => {
      const { password } = await api.call('AS19', { params: { id: user.id } });
      setHandOver({ text: t('au_password_shown', { username: user.username }), value: password, testId: 'new-password' });
    });
  const resetLink = () =>
    run(async () => {
      setNotice('');
      const { link, expires_at } = await api.call('AS21', { params: { id: user.id } });
      setHandOver({ text: t('au_link_shown', { username: user.username, time: formatTime(expires_at) }), value: link, testId: 'reset-link' });
    });
  const saveGroup = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api.call('AS20', { params: { id: user.id }, body: { group: group.trim() } });
      await done(t('au_group_done', { username: user.username, group: group.trim() }));
    });
  };
  return (
    <div class="user-panel" data-user-panel={user.username}>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      {handOver && (
        <div class="notice info" role="status">
          <p>{handOver.text}</p>
          <div class="row">
            <code class="mono" data-testid={handOver.testId}>
              {handOver.value}
            </code>
            <CopyButton text={handOver.value} label={t('copy')} copied={t('copied')} failed={t('copy_failed')} />
          </div>
        </div>
      )}
      <h3>{t('au_account')}</h3>
      <div class="row">
        {p.promote && (
          <button type="button" class="secondary" disabled={busy} onClick={() => manage('promote')}>
            {t('au_promote')}
          </button>
        )}
        {p.demote && (
          <button type="button" class="secondary" disabled={busy} onClick={() => manage('demote')}>
            {t('au_demote')}
          </button>
        )}
        {p.enable && (
          <button type="button" disabled={busy} onClick={() => manage('enable')}>
            {t('admin_enable')}
          </button>
        )}
        {p.password && (
          <button type="button" class="secondary" disabled={busy} onClick={resetPassword}>
            {t('au_password_btn')}
          </button>
        )}
        {p.password && (
          <button type="button" class="secondary" disabled={busy} onClick={resetLink}>
            {t('au_link_btn')}
          </button>
        )}
        <button type="button" class="secondary" onClick={() => navigate(`/admin/usage?username=${encodeURIComponent(user.username)}`)}>
          {t('au_usage')}
        </button>
        {p.remove && (
          <button type="button" class="danger" disabled={busy} onClick={remove}>
            {t('au_delete')}
          </button>
        )}
      </div>
      {p.group && (
        <form class="row" onSubmit={saveGroup}>
          <Field label={t('pf_group')} name="group" required maxLength={64} pattern="[A-Za-z0-9_.\-]{1,64}" value={group} onInput={(e) => setGroup(e.currentTarget.value)} />
          <button type="submit" class="secondary" disabled={busy || group.trim() === user.group}>
            {t('au_group_btn')}
          </button>
        </form>
      )}
      {p.balance && <Balance user={user} onDone={done} />}
      {dialog}
    </div>
  );
}
