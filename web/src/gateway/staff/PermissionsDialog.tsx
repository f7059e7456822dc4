import { useState } from 'preact/hooks';
import { Dialog, ErrorBox, Notice, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { PERMISSIONS, permissionName, type Permission, type StaffEntry } from './format';

type Effect = 'clear' | 'grant' | 'deny';

/** GS09: each known permission by readable name, set to "by role", granted or denied; saved on change. */
export function PermissionsDialog(props: { staff: StaffEntry; self: boolean; adminDefaults: string[]; onClose: () => void }) {
  const [entry, setEntry] = useState(props.staff);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const effectOf = (p: string): Effect => (entry.denied.includes(p) ? 'deny' : entry.granted.includes(p) ? 'grant' : 'clear');
  const change = (p: Permission, effect: Effect) =>
    run(async () => {
      setNotice('');
      await api.call('GS09', { params: { id: entry.id }, body: { permission: p, effect } });
      const fresh = (await api.call('GS06')).items.find((s) => s.id === entry.id);
      if (fresh) setEntry(fresh);
      setNotice(t('sf_perm_saved', { permission: permissionName(p) }));
    });
  const locked = props.self || entry.role === 'root';
  return (
    <Dialog title={t('sf_perm_title', { name: entry.name })} onClose={props.onClose} wide>
      {entry.role === 'root' ? <p>{t('sf_perm_root')}</p> : props.self ? <p>{t('sf_perm_self')}</p> : <p class="muted">{t('sf_perm_hint')}</p>}
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      <div class="table-scroll" tabIndex={0} role="region" aria-label={t('sf_perm_title', { name: entry.name })}>
        <table class="perm-table">
          <thead>
            <tr>
              <th scope="col">{t('sf_permissions')}</th>
              <th scope="col">{t('sf_state')}</th>
              <th scope="col">{t('sf_perm_now')}</th>
            </tr>
          </thead>
          <tbody>
            {PERMISSIONS.map((p) => {
              const holds = entry.permissions.includes(p);
              const byRole = entry.role === 'admin' && props.adminDefaults.includes(p);
              return (
                <tr data-permission={p}>
                  <th scope="row">{permissionName(p)}</th>
                  <td>
                    <select aria-label={permissionName(p)} disabled={locked || busy} value={effectOf(p)} onChange={(e) => void change(p, e.currentTarget.value as Effect)}>
                      <option value="clear">{t(byRole ? 'sf_perm_by_role_on' : 'sf_perm_by_role_off')}</option>
                      <option value="grant">{t('sf_perm_grant')}</option>
                      <option value="deny">{t('sf_perm_deny')}</option>
                    </select>
                  </td>
                  <td>
                    <span class={`badge ${holds ? 'on' : 'off'}`}>{t(holds ? 'sf_perm_holds' : 'sf_perm_lacks')}</span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p>
        <button type="button" class="secondary" onClick={props.onClose}>
          {t('close')}
        </button>
      </p>
    </Dialog>
  );
}
