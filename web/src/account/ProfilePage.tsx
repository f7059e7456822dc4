// The profile (AS03, AS04): who the user is (username, email, group, role), the display name, and a password
// change with the current password (every other session ends; this one continues with the new authority).
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, useAction } from '../shared/ui';
import { adopt, api, useSession } from './session';
import { roleName } from './AdminUsers';
import { t } from './texts';

export function ProfilePage() {
  const session = useSession();
  const [me, setMe] = useState<{ username: string; display_name: string; email: string; group: string; role: number } | null>(null);
  const [name, setName] = useState('');
  const [pw, setPw] = useState({ original: '', next: '', again: '' });
  const [nameNotice, setNameNotice] = useState('');
  const [pwNotice, setPwNotice] = useState('');
  const load = useAction();
  const nameAction = useAction();
  const pwAction = useAction();
  useEffect(() => {
    void load.run(async () => {
      const d = await api.call('AS03');
      setMe(d);
      setName(d.display_name);
    });
  }, []);
  const saveName = (e: Event) => {
    e.preventDefault();
    setNameNotice('');
    void nameAction.run(async () => {
      await api.call('AS04', { body: { display_name: name.trim() } });
      if (session.user) adopt({ access_token: session.token!, user: { ...session.user, display_name: name.trim() } });
      setNameNotice(t('pf_name_saved'));
    });
  };
  const savePassword = (e: Event) => {
    e.preventDefault();
    setPwNotice('');
    if (pw.next !== pw.again) return pwAction.setError(new Error(t('pf_mismatch')));
    void pwAction.run(async () => {
      const rotation = await api.call('AS04', { body: { original_password: pw.original, password: pw.next } });
      if (rotation) adopt(rotation);
      setPw({ original: '', next: '', again: '' });
      setPwNotice(t('pf_password_saved'));
    });
  };
  return (
    <>
      <section class="card" aria-labelledby="profile-title">
        <h2 id="profile-title">{t('profile')}</h2>
        {me && (
          <dl class="figures">
            <div>
              <dt>{t('new_username')}</dt>
              <dd data-testid="pf-username">{me.username}</dd>
            </div>
            <div>
              <dt>{t('email')}</dt>
              <dd>{me.email || '—'}</dd>
            </div>
            <div>
              <dt>{t('pf_group')}</dt>
              <dd>{me.group}</dd>
            </div>
            <div>
              <dt>{t('admin_role')}</dt>
              <dd>{roleName(me.role)}</dd>
            </div>
          </dl>
        )}
        <ErrorBox error={load.error} />
        <form class="row" onSubmit={saveName}>
          <Field label={t('pf_display_name')} name="display_name" required maxLength={20} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <button type="submit" disabled={nameAction.busy}>
            {t('save')}
          </button>
        </form>
        {nameNotice && <Notice>{nameNotice}</Notice>}
        <ErrorBox error={nameAction.error} />
      </section>
      <section class="card" aria-labelledby="password-title">
        <h2 id="password-title">{t('pf_password')}</h2>
        <p class="muted">{t('pf_password_hint')}</p>
        <form onSubmit={savePassword}>
          <Field label={t('pf_current')} name="original_password" type="password" autocomplete="current-password" required value={pw.original} onInput={(e) => setPw({ ...pw, original: e.currentTarget.value })} />
          <Field label={t('new_password')} name="password" type="password" autocomplete="new-password" required value={pw.next} onInput={(e) => setPw({ ...pw, next: e.currentTarget.value })} />
          <Field label={t('pf_again')} name="password_again" type="password" autocomplete="new-password" required value={pw.again} onInput={(e) => setPw({ ...pw, again: e.currentTarget.value })} />
          <button type="submit" disabled={pwAction.busy}>
            {t('pf_change_password')}
          </button>
        </form>
        {pwNotice && <Notice>{pwNotice}</Notice>}
        <ErrorBox error={pwAction.error} />
      </section>
    </>
  );
}
