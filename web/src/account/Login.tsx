import { useState } from 'preact/hooks';
import { ErrorBox, Field, Link, useAction } from '../shared/ui';
import { api } from './session';
import { t } from './texts';
import { encryptPassword, getAssertion } from './webauthn';
import { finishLogin, SecondStep, type Challenge } from './SecondStep';
import { settings } from './settings';
import { SocialButtons } from './SocialLogin';

/** Password fields of A25/A47: plain, or encrypted with A27's key when the server asks for it. */
export async function passwordFields(password: string): Promise<Record<string, string>> {
  if (!settings.password_encryption) return { password };
  const key = await api.call('A27');
  if (!key?.enabled) return { password };
  return { password_encrypted: await encryptPassword(key.public_key, password), encryption_key_id: key.kid };
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
