import { useState } from 'preact/hooks';
import { Dialog, Field, FormActions, Select, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { PERMISSIONS, permissionName } from './format';

/** GS07: a staff member (root or admin) or a service identity with the permissions ticked. */
export function CreateStaff(props: { onClose: () => void; onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'staff' | 'service'>('staff');
  const [role, setRole] = useState<'admin' | 'root'>('admin');
  const [perms, setPerms] = useState<Set<string>>(new Set());
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const created = await api.call('GS07', {
        body: { name: name.trim(), kind, ...(kind === 'staff' ? { role } : {}), ...(kind === 'service' ? { permissions: [...perms] as any } : {}) },
      });
      props.onCreated(created.name);
    });
  };
  const flip = (p: string) => {
    const next = new Set(perms);
    if (next.has(p)) next.delete(p);
    else next.add(p);
    setPerms(next);
  };
  return (
    <Dialog title={t('sf_create_title')} onClose={props.onClose}>
      <form onSubmit={submit}>
        <Select
          label={t('sf_kind')}
          name="kind"
          value={kind}
          onChange={(e) => setKind(e.currentTarget.value as 'staff' | 'service')}
          options={[
            ['staff', t('sf_kind_staff')],
            ['service', t('sf_kind_service')],
          ]}
        />
        <Field label={t('sf_name')} hint={t('sf_name_hint')} name="name" required maxLength={64} pattern="[A-Za-z0-9._@\-]{1,64}" autocomplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        {kind === 'staff' ? (
          <>
            <Select
              label={t('sf_role')}
              name="role"
              value={role}
              onChange={(e) => setRole(e.currentTarget.value as 'admin' | 'root')}
              options={[
                ['admin', t('sf_role_admin')],
                ['root', t('sf_role_root')],
              ]}
            />
            <p class="muted small">{t('sf_role_hint')}</p>
          </>
        ) : (
          <fieldset>
            <legend>{t('sf_permissions')}</legend>
            <p class="muted small">{t('sf_service_hint')}</p>
            {PERMISSIONS.map((p) => (
              <label class="check-line">
                <input type="checkbox" name="permission" value={p} checked={perms.has(p)} onChange={() => flip(p)} /> {permissionName(p)}
              </label>
            ))}
          </fieldset>
        )}
        <FormActions error={error} submit={t('sf_create')} disabled={busy} cancel={t('cancel')} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}
