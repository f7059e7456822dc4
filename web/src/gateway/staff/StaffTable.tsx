import { formatTime } from '../../shared/ui';
import { t } from '../texts';
import { permissionName, roleName, type StaffEntry, type StaffList } from './format';

/** The identities as a table (one card per identity on a phone); the own row is marked and keeps its Disable off. */
export function StaffTable(props: { list: StaffList; onOpen: (kind: 'permissions' | 'tokens' | 'totp', id: number) => void; onToggle: (s: StaffEntry) => void }) {
  const { list } = props;
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={t('sf_table')}>
      <table class="staff-table">
        <thead>
          <tr>
            <th scope="col">{t('sf_name')}</th>
            <th scope="col">{t('sf_role')}</th>
            <th scope="col">{t('sf_state')}</th>
            <th scope="col">{t('sf_totp')}</th>
            <th scope="col">{t('sf_permissions')}</th>
            <th scope="col">{t('sf_live_tokens')}</th>
            <th scope="col">{t('sf_created')}</th>
            <th scope="col">{t('sf_actions')}</th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((s) => {
            const self = s.id === list.self_id;
            return (
              <tr data-id={String(s.id)} data-name={s.name}>
                <th scope="row" data-label={t('sf_name')}>
                  {s.name} {self && <span class="badge busy">{t('sf_you')}</span>}
                </th>
                <td data-label={t('sf_role')}>{s.kind === 'service' ? t('sf_kind_service') : roleName(s.role)}</td>
                <td data-label={t('sf_state')}>
                  <span class={`badge ${s.disabled ? 'off' : 'on'}`}>{t(s.disabled ? 'sf_disabled' : 'sf_enabled')}</span>
                </td>
                <td data-label={t('sf_totp')}>{s.kind === 'service' ? <span class="muted">{t('sf_totp_na')}</span> : <span class={`badge ${s.totp_enrolled ? 'on' : ''}`}>{t(s.totp_enrolled ? 'sf_totp_on' : 'sf_totp_off')}</span>}</td>
                <td data-label={t('sf_permissions')} class="perms">
                  {s.role === 'root' ? t('sf_all_permissions') : s.permissions.length ? s.permissions.map(permissionName).join(', ') : t('none')}
                </td>
                <td data-label={t('sf_live_tokens')}>{s.live_tokens}</td>
                <td data-label={t('sf_created')}>{formatTime(s.created_at)}</td>
                <td data-label={t('sf_actions')} class="actions">
                  <div class="row" role="group" aria-label={t('sf_actions_of', { name: s.name })}>
                    <button type="button" class="secondary" onClick={() => props.onOpen('tokens', s.id)}>
                      {t('sf_manage_tokens')}
                    </button>
                    {s.role !== 'root' && (
                      <button type="button" class="secondary" onClick={() => props.onOpen('permissions', s.id)}>
                        {t('sf_edit_permissions')}
                      </button>
                    )}
                    {s.kind === 'staff' && !s.disabled && (
                      <button type="button" class="secondary" onClick={() => props.onOpen('totp', s.id)}>
                        {t('sf_enroll')}
                      </button>
                    )}
                    {!self && (
                      <button type="button" class={s.disabled ? 'secondary' : 'danger'} onClick={() => props.onToggle(s)}>
                        {t(s.disabled ? 'sf_enable' : 'sf_disable')}
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
  );
}
