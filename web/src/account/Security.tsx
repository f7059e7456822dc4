import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, formatTime, useAction } from '../shared/ui';
import { adopt, api, useSession } from './session';
import { settings } from './settings';
import { SocialBinding } from './SocialBinding';
import { useResume, useStepUp, withProof, type StepUp } from './StepUp';
import { t } from './texts';
import { createCredential } from './webauthn';


function TwoFactor({ stepUp }: { stepUp: StepUp }) {
  const [status, setStatus] = useState<any>(null);
  const [setup, setSetup] = useState<any>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const load = () => run(async () => setStatus(await api.call('A17')));
  useEffect(() => void load(), []);
  const begin = () =>
    run(async () => {
      setNotice('');
      const d = await withProof(stepUp, '2fa.setup', undefined, (headers) => api.call('A15', { headers }), '2fa.setup');
      if (d) setSetup(d);
    });
  useResume('2fa.setup', begin);
  const enable = (e: Event) => {
    e.preventDefault();
    run(async () => {
      adopt(await api.call('A14', { body: { flow_token: setup.flow_token, code: code.trim() } }));
      setCodes(setup.backup_codes);
      setSetup(null);
      setCode('');
      setNotice(t('twofa_on'));
      await load();
    });
  };
  const disable = () =>
    run(async () => {
      const d = await withProof(stepUp, '2fa.disable', undefined, (headers) => api.call('A13', { headers, body: {} }));
      if (!d) return;
      adopt(d);
      setCodes(null);
      setNotice(t('twofa_off'));
      await load();
    });
  const regenerate = () =>
    run(async () => {
      const d = await withProof(stepUp, '2fa.backup_codes.regenerate', undefined, (headers) => api.call('A12', { headers, body: {} }));
      if (!d) return;
      adopt(d);
      setCodes(d.backup_codes);
      await load();
    });
  return (
    <section class="card" aria-labelledby="twofa-title">
      <h2 id="twofa-title">{t('twofa')}</h2>
      {status && (
        <p>
          <span class={`badge ${status.enabled ? 'on' : 'off'}`} data-testid="twofa-status">
            {status.enabled ? t('enabled') : t('disabled')}
          </span>{' '}
          {status.enabled && <span class="muted">{t('remaining', { n: status.backup_codes_remaining })}</span>}
        </p>
      )}
      {notice && <Notice>{notice}</Notice>}
      {setup ? (
        <form onSubmit={enable}>
          <p>{t('scan_qr')}</p>
          <img class="qr" src={setup.qr_code_image} alt={setup.otpauth_uri} />
          <p>
            {t('secret')}: <span class="mono" data-testid="totp-secret">{setup.secret}</span>
          </p>
          <p>{t('backup_codes')}</p>
          <div class="codes" data-testid="backup-codes">
            {setup.backup_codes.map((c: string) => (
              <span>{c}</span>
            ))}
          </div>
          <Field label={t('confirm_code')} name="enable-code" autocomplete="one-time-code" inputMode="numeric" required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          <div class="row">
            <button type="submit" disabled={busy}>
              {t('confirm_enable')}
            </button>
            <button type="button" class="secondary" onClick={() => setSetup(null)}>
              {t('cancel')}
            </button>
          </div>
        </form>
      ) : (
        <div class="row">
          {status && !status.enabled && (
            <button type="button" disabled={busy} onClick={begin}>
              {t('enable_2fa')}
            </button>
          )}
          {status?.enabled && (
            <>
              <button type="button" class="secondary" disabled={busy} onClick={regenerate}>
                {t('regen_codes')}
              </button>
              <button type="button" class="danger" disabled={busy} onClick={disable}>
                {t('disable_2fa')}
              </button>
            </>
          )}
        </div>
      )}
      {codes && !setup && (
        <>
          <p>{t('backup_codes')}</p>
          <div class="codes">
            {codes.map((c) => (
              <span>{c}</span>
            ))}
          </div>
        </>
      )}
      <ErrorBox error={error} />
    </section>
  );
}

function Passkey({ stepUp }: { stepUp: StepUp }) {
  const [status, setStatus] = useState<any>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const load = () => run(async () => setStatus(await api.call('A34')));
  useEffect(() => void load(), []);
  const register = () =>
    run(async () => {
      setNotice('');
      const begin = await withProof(stepUp, 'passkey.register', undefined, (headers) => api.call('A37', { headers, body: {} }), 'passkey.register');
      if (!begin) return;
      const credential = await createCredential(begin.options);
      await api.call('A38', { body: { flow_token: begin.flow_token, credential } });
      setNotice(t('passkey_registered'));
      await load();
    });
  useResume('passkey.register', register);
  const remove = () =>
    run(async () => {
      const d = await withProof(stepUp, 'passkey.delete', undefined, (headers) => api.call('A33', { headers }));
      if (!d) return;
      if (d.access_token) adopt(d);
      setNotice(t('passkey_deleted'));
      await load();
    });
  if (settings.passkey === false) return null;
  return (
    <section class="card" aria-labelledby="passkey-title">
      <h2 id="passkey-title">{t('passkey')}</h2>
      {status && (
        <p>
          <span class={`badge ${status.enabled ? 'on' : 'off'}`} data-testid="passkey-status">
            {status.enabled ? t('enabled') : t('disabled')}
          </span>{' '}
          {status.enabled && <span class="muted">{t('last_used', { time: formatTime(status.last_used_at) })}</span>}
        </p>
      )}
      {notice && <Notice>{notice}</Notice>}
      <div class="row">
        <button type="button" disabled={busy} onClick={register}>
          {t('passkey_register')}
        </button>
        {status?.enabled && (
          <button type="button" class="danger" disabled={busy} onClick={remove}>
            {t('passkey_delete')}
          </button>
        )}
      </div>
      <ErrorBox error={error} />
    </section>
  );
}

function EmailBinding({ stepUp }: { stepUp: StepUp }) {
  const session = useSession();
  const [email, setEmail] = useState('');
  const [flow, setFlow] = useState<any>(null);
  const [codes, setCodes] = useState({ new_code: '', old_code: '' });
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const start = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const address = email.trim();
      const d = await withProof(stepUp, 'account.binding.bind', { provider: 'email', email: address }, (headers) => api.call('A04', { headers, body: { email: address } }));
      if (d) setFlow(d);
    });
  };
  const finish = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const d = await api.call('A02', { body: { flow_token: flow.flow_token, new_code: codes.new_code.trim(), ...(flow.old_email_required ? { old_code: codes.old_code.trim() } : {}) } });
      if (d?.access_token) adopt({ ...d, user: session.user ? { ...session.user, email: d.email } : undefined });
      setFlow(null);
      setNotice(t('email_bound'));
    });
  };
  return (
    <section class="card" aria-labelledby="email-title">
      <h2 id="email-title">{t('email_binding')}</h2>
      <p class="muted">{session.user?.email ? t('current_email', { email: session.user.email }) : t('no_email')}</p>
      {notice && <Notice>{notice}</Notice>}
      {flow ? (
        <form onSubmit={finish}>
          <Field label={t('new_code')} name="new_code" autocomplete="one-time-code" required value={codes.new_code} onInput={(e) => setCodes({ ...codes, new_code: e.currentTarget.value })} />
          {flow.old_email_required && <Field label={t('old_code')} name="old_code" required value={codes.old_code} onInput={(e) => setCodes({ ...codes, old_code: e.currentTarget.value })} />}
          <div class="row">
            <button type="submit" disabled={busy}>
              {t('confirm')}
            </button>
            <button type="button" class="secondary" disabled={busy} onClick={() => run(async () => setFlow({ ...flow, ...(await api.call('A03', { body: { flow_token: flow.flow_token } })) }))}>
              {t('resend')}
            </button>
          </div>
        </form>
      ) : (
        <form onSubmit={start} class="row">
          <Field label={t('email')} name="new_email" type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>
            {t('bind_email')}
          </button>
        </form>
      )}
      <ErrorBox error={error} />
    </section>
  );
}

function Bindings({ stepUp }: { stepUp: StepUp }) {
  const [list, setList] = useState<any[] | null>(null);
  const { busy, error, run } = useAction();
  const load = () => run(async () => setList(await api.call('A31')));
  useEffect(() => void load(), []);
  const bind = (slug: string) =>
    run(async () => {
      const d = await withProof(stepUp, 'account.binding.bind', { provider: slug }, (headers) => api.call('A05', { headers, body: { provider: slug, intent: 'bind' } }), 'binding.bind');
      if (d) location.assign(d.authorization_url);
    });
  useResume('binding.bind', (c) => bind(String(c?.provider)));
  const unbind = (id: string) =>
    run(async () => {
      const d = await withProof(stepUp, 'account.binding.unbind', { provider_id: id }, (headers) => api.call('A32', { headers, params: { provider_id: id } }), 'binding.unbind');
      if (d) await load();
    });
  useResume('binding.unbind', (c) => unbind(String(c?.provider_id)));
  const bound = new Set((list ?? []).map((b) => b.provider_id));
  return (
    <section class="card" aria-labelledby="bindings-title">
      <h2 id="bindings-title">{t('bindings')}</h2>
      {list && list.length === 0 && <p class="muted">{t('no_bindings')}</p>}
      <ul>
        {(list ?? []).map((b) => (
          <li class="row">
            <strong>{b.provider_name}</strong> <span class="muted">{b.provider_user_id}</span>
            <button type="button" class="link" disabled={busy} onClick={() => unbind(b.provider_id)}>
              {t('unbind')}
            </button>
          </li>
        ))}
      </ul>
      <SocialBinding stepUp={stepUp} bound={bound} onBound={load} />
      <div class="row">
        {(settings.oauth ?? [])
          .filter((p) => !bound.has(p.slug))
          .map((p) => (
            <button type="button" class="secondary" disabled={busy} onClick={() => bind(p.slug)}>
              {t('bind', { name: p.name })}
            </button>
          ))}
      </div>
      <ErrorBox error={error} />
    </section>
  );
}

export function SecurityPage() {
  const stepUp = useStepUp();
  return (
    <>
      <TwoFactor stepUp={stepUp} />
      <Passkey stepUp={stepUp} />
      <EmailBinding stepUp={stepUp} />
      <Bindings stepUp={stepUp} />
      {stepUp.dialog}
    </>
  );
}
