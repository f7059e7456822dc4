import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Notice, formatTime, useAction } from '../shared/ui';
import { describeUserAgent } from '../shared/user-agent';
import { api, clear } from './session';
import { t } from './texts';

/** A session's login method in words: password, passkey, WeChat, or the provider of `oauth:<slug>` / telegram. */
function loginMethod(m: string) {
  const key = `method_${m}`;
  if (m === 'password' || m === 'passkey' || m === 'wechat') return t(key);
  if (m === 'telegram') return 'Telegram';
  return m.startsWith('oauth:') ? providerName(m.slice(6)) : m;
}
const PROVIDERS: Record<string, string> = { github: 'GitHub', discord: 'Discord', oidc: 'OIDC', linuxdo: 'LinuxDO', telegram: 'Telegram' };
export const providerName = (slug: string) => PROVIDERS[slug] ?? slug;

export function SessionsPage() {
  const [list, setList] = useState<any[] | null>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const load = () => run(async () => setList(await api.call('A43')));
  useEffect(() => void load(), []);
  const revoke = (sid: string) =>
    run(async () => {
      const d = await api.call('A44', { params: { sid } });
      if (d.current) return clear();
      setNotice(t('revoked_n', { n: 1 }));
      await load();
    });
  const revokeOthers = () =>
    run(async () => {
      const d = await api.call('A45');
      setNotice(t('revoked_n', { n: d.revoked_count }));
      await load();
    });
  return (
    <section class="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title">{t('sessions')}</h2>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      {!list ? (
        <p>{t('loading')}</p>
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-labelledby="sessions-title">
        <table>
          <thead>
            <tr>
              <th scope="col">{t('device')}</th>
              <th scope="col">{t('method_col')}</th>
              <th scope="col">{t('ip')}</th>
              <th scope="col">{t('created')}</th>
              <th scope="col">{t('last_active')}</th>
              <th scope="col">{t('actions')}</th>
            </tr>
          </thead>
          <tbody>
            {list.map((s) => (
              <tr data-sid={s.sid} data-current={s.current ? 'true' : 'false'}>
                <td>
                  {s.current && <span class="badge on">{t('this_device')}</span>}{' '}
                  <span class="ua" title={s.user_agent || undefined}>
                    {s.user_agent ? describeUserAgent(s.user_agent, { on: (browser, os) => t('ua_on', { browser, os }), unknown: t('ua_unknown') }) : '—'}
                  </span>
                </td>
                <td>{loginMethod(s.login_method)}</td>
                <td>{s.ip}</td>
                <td>{formatTime(s.created_at)}</td>
                <td>{formatTime(s.last_active_at)}</td>
                <td>
                  <button type="button" class="secondary" disabled={busy} onClick={() => revoke(s.sid)} aria-label={`${t('revoke')} ${s.sid.slice(0, 8)}`}>
                    {t('revoke')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
      <p>
        <button type="button" class="danger" disabled={busy || (list ?? []).length < 2} onClick={revokeOthers}>
          {t('revoke_others')}
        </button>
      </p>
    </section>
  );
}
