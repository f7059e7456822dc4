import { useState } from 'preact/hooks';
import { ErrorBox, Field, Link, navigate, pageSettings, useAction } from '../shared/ui';
import { adopt, api } from './session';
import { t } from './texts';
import { encryptPassword, getAssertion } from './webauthn';
import { SocialButtons } from './SocialLogin';

export interface ConsoleSettings {
  oauth: Array<{ slug: string; name: string }>;
  passkey: boolean;
  password_encryption: boolean;
  email_verification: boolean;
  /** Telegram login: the bot's public id and name (the token stays on the server). */
  telegram: { bot_id: string; bot_name: string } | null;
  wechat: boolean;
}
export const settings = pageSettings<ConsoleSettings>();

/** Password fields of A25/A47: plain, or encrypted with A27's key when the server asks for it. */
export async function passwordFields(password: string): Promise<Record<string, string>> {
  if (!settings.password_encryption) return { password };
  const key = await api.call('A27');
  if (!key?.enabled) return { password };
  return { password_encrypted: await encryptPassword(key.public_key, password), encryption_key_id: key.kid };
}

/** Either a session bundle (logged in) or a second-step challenge. */
export function finishLogin(data: any, onChallenge: (c: Challenge) => void) {
  if (data?.require_verification) return onChallenge(data as Challenge);
  adopt(data);
  navigate('/');
}

export interface Challenge {
  flow_token: string;
  methods: Array<{ method: string; available: boolean; reason?: string }>;
}

export function OAuthButtons() {
  const { error, run } = useAction();
  if (!settings.oauth?.length) return null;
  return (
    <div class="oauth">
      {settings.oauth.map((p) => (
        <button
          type="button"
          class="secondary"
          onClick={() =>
            run(async () => {
              const d = await api.call('A05', { body: { provider: p.slug, intent: 'login' } });
              location.assign(d.authorization_url);
            })
          }
        >
          {t('oauth_with', { name: p.name })}
        </button>
      ))}
      <ErrorBox error={error} />
    </div>
  );
}

export function SecondStep({ challenge }: { challenge: Challenge }) {
  const usable = challenge.methods.filter((m) => m.available).map((m) => m.method);
  const [mode, setMode] = useState<'totp' | 'backup' | 'passkey'>(usable.includes('2fa') ? 'totp' : 'passkey');
  const [code, setCode] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => finishLogin(await api.call('A30', { body: { flow_token: challenge.flow_token, method: '2fa', code: code.trim() } }), () => {}));
  };
  const passkey = () =>
    run(async () => {
      const begin = await api.call('A28', { body: { flow_token: challenge.flow_token } });
      const credential = await getAssertion(begin.options);
      finishLogin(await api.call('A29', { body: { flow_token: challenge.flow_token, passkey_flow_token: begin.flow_token, credential } }), () => {});
    });
  return (
    <section class="card" aria-labelledby="second-step">
      <h2 id="second-step">{t('second_step')}</h2>
      <div class="row" role="group" aria-label={t('method')}>
        {usable.includes('2fa') && (
          <>
            <button type="button" class={mode === 'totp' ? '' : 'secondary'} aria-pressed={mode === 'totp'} onClick={() => setMode('totp')}>
              {t('use_totp')}
            </button>
            <button type="button" class={mode === 'backup' ? '' : 'secondary'} aria-pressed={mode === 'backup'} onClick={() => setMode('backup')}>
              {t('use_backup')}
            </button>
          </>
        )}
        {usable.includes('passkey') && (
          <button type="button" class={mode === 'passkey' ? '' : 'secondary'} aria-pressed={mode === 'passkey'} onClick={() => setMode('passkey')}>
            {t('use_passkey')}
          </button>
        )}
      </div>
      {challenge.methods
        .filter((m) => !m.available)
        .map((m) => (
          <p class="muted">{m.reason}</p>
        ))}
      {mode === 'passkey' ? (
        <p>
          <button type="button" disabled={busy} onClick={passkey}>
            {t('use_passkey')}
          </button>
        </p>
      ) : (
        <form onSubmit={submit}>
          <Field
            label={mode === 'totp' ? t('totp_code') : t('backup_code')}
            name="code"
            autocomplete="one-time-code"
            inputMode={mode === 'totp' ? 'numeric' : 'text'}
            required
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
          <button type="submit" disabled={busy}>
            {t('verify')}
          </button>
        </form>
      )}
      <ErrorBox error={error} />
    </section>
  );
}

export function LoginPage() {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const { busy, error, run } = useAction();
  if (challenge) return <SecondStep challenge={challenge} />;
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => finishLogin(await api.call('A25', { body: { username: username.trim(), ...(await passwordFields(password)) } }), setChallenge));
  };
  const passkey = () =>
    run(async () => {
      const begin = await api.call('A35', { body: {} });
      const credential = await getAssertion(begin.options);
      finishLogin(await api.call('A36', { body: { flow_token: begin.flow_token, credential } }), setChallenge);
    });
  return (
    <section class="card" aria-labelledby="login-title">
      <h2 id="login-title">{t('login')}</h2>
      <form onSubmit={submit}>
        <Field label={t('username')} name="username" autocomplete="username webauthn" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        <Field label={t('password')} name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <div class="row">
          <button type="submit" disabled={busy}>
            {t('login')}
          </button>
          {settings.passkey && (
            <button type="button" class="secondary" disabled={busy} onClick={passkey}>
              {t('passkey_login')}
            </button>
          )}
        </div>
      </form>
      <ErrorBox error={error} />
      <OAuthButtons />
      <SocialButtons onChallenge={setChallenge} />
      <p class="row">
        <Link to="/register">{t('no_account')}</Link>
        <Link to="/reset">{t('forgot')}</Link>
      </p>
    </section>
  );
}
