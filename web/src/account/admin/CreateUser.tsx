// Creating a user (AS18): username, display name, a first password and a role below the admin's own.
import { useState } from 'preact/hooks';
import { Dialog, Field, FormActions, Select, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { ROLE } from './powers';

export function CreateUser(props: { myRole: number; onDone: (username: string) => void; onCancel: () => void }) {
  const [d, setD] = useState({ username: '', display_name: '', password: '', role: String(ROLE.user) });
  const { busy, error, run } = useAction();
  const roles = [ROLE.user, ROLE.admin].filter((r) => r < props.myRole);
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const created = await api.call('AS18', { body: { username: d.username.trim(), display_name: d.display_name.trim() || undefined, password: d.password, role: Number(d.role) } });
      props.onDone(created.username);
    });
  };
  return (
    <Dialog title={t('au_create')} onClose={props.onCancel}>
      <form onSubmit={submit}>
        <Field label={t('new_username')} name="username" required maxLength={20} autocomplete="off" value={d.username} onInput={(e) => setD({ ...d, username: e.currentTarget.value })} />
        <Field label={t('pf_display_name')} name="display_name" maxLength={20} value={d.display_name} hint={t('au_display_hint')} onInput={(e) => setD({ ...d, display_name: e.currentTarget.value })} />
        <Field label={t('password')} name="password" type="password" required autocomplete="new-password" value={d.password} hint={t('au_password_hint')} onInput={(e) => setD({ ...d, password: e.currentTarget.value })} />
        <Select label={t('admin_role')} name="role" value={d.role} onChange={(e) => setD({ ...d, role: e.currentTarget.value })} options={roles.map((r) => [String(r), t(`role_${r}`)])} />
        <FormActions error={error} submit={t('au_create_btn')} disabled={busy} cancel={t('cancel')} onCancel={props.onCancel} />
      </form>
    </Dialog>
  );
}
