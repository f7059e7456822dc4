import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Link, Notice, navigate, useAction } from '../shared/ui';
import { api } from './session';
import { t } from './texts';
import { finishLogin, SecondStep, type Challenge } from './SecondStep';
import { settings } from './settings';
import { resumeWithProof, takePendingStepUp } from './StepUp';

export function RegisterPage() {
  const [f, setF] = useState({ username: '', password: '', email: '', verification_code: '' });
  const [sent, setSent] = useState(false);
  const [done, setDone] = useState(false);
  const { busy, error, run } = useAction();
  const set = (k: keyof typeof f) => (e: any) => setF({ ...f, [k]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      await api.call('A41', { body: { username: f.username.trim(), password: f.password, ...(f.email ? { email: f.email.trim(), verification_code: f.verification_code.trim() } : {}) } });
      setDone(true);
    });
  };
  if (done)
    return (
      <section class="card">
        <Notice>{t('registered')}</Notice>
        <Link to="/login">{t('login')}</Link>
      </section>
    );
  return (
    <section class="card" aria-labelledby="register-title">
      <h2 id="register-title">{t('register')}</h2>
      <form onSubmit={submit}>
        <Field label={t('new_username')} name="username" autocomplete="username" required maxLength={20} value={f.username} onInput={set('username')} />
        <Field label={t('password')} name="password" type="password" autocomplete="new-password" required minLength={8} maxLength={128} value={f.password} onInput={set('password')} />
        {settings.email_verification && (
          <>
            <Field label={t('email')} name="email" type="email" autocomplete="email" required value={f.email} onInput={set('email')} />
            <div class="row">
              <Field label={t('email_code')} name="verification_code" autocomplete="one-time-code" required value={f.verification_code} onInput={set('verification_code')} />
              <button type="button" class="secondary" disabled={busy || !f.email} onClick={() => run(async () => (await api.call('A46', { query: { email: f.email.trim() } }), setSent(true)))}>
                {t('send_code')}
              </button>
            </div>
            {sent && <Notice>{t('code_sent')}</Notice>}
          </>
        )}
        <button type="submit" disabled={busy}>
          {t('register')}
        </button>
      </form>
      <ErrorBox error={error} />
      <p>
        <Link to="/login">{t('have_account')}</Link>
      </p>
    </section>
  );
}

/** /reset asks for the link; /user/reset?email&token (the link in the mail) sets the new password. */
export function ResetPage({ query }: { query: URLSearchParams }) {
  const token = query.get('token');
  // An admin's reset link (AS21) names the account by id: no address to show.
  const user = query.get('user');
  const [email, setEmail] = useState(query.get('email') ?? '');
  const [password, setPassword] = useState('');
  const [done, setDone] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      if (token) {
        await api.call('A42', { body: user ? { user: Number(user), token, password } : { email, token, password } });
        setDone(t('reset_done'));
      } else {
        await api.call('A11', { query: { email: email.trim() } });
        setDone(t('reset_sent'));
      }
    });
  };
  return (
    <section class="card" aria-labelledby="reset-title">
      <h2 id="reset-title">{t('reset_title')}</h2>
      {done ? (
        <Notice>{done}</Notice>
      ) : (
        <form onSubmit={submit}>
          {!user && <Field label={t('email')} name="email" type="email" autocomplete="email" required readOnly={!!token} value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          {token && <Field label={t('new_password')} name="password" type="password" autocomplete="new-password" required minLength={8} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />}
          <button type="submit" disabled={busy}>
            {token ? t('reset_title') : t('reset_send')}
          </button>
        </form>
      )}
      <ErrorBox error={error} />
      <p>
        <Link to="/login">{t('login')}</Link>
      </p>
    </section>
  );
}

/**
 * The provider sends the browser back to /oauth/<provider>?code&state: finish login, binding or a step-up
 * verification (A01), which returns to the page that asked for it.
 */
export function OAuthCallback({ provider, query }: { provider: string; query: URLSearchParams }) {
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const [bound, setBound] = useState(false);
  const { error, run } = useAction();
  useEffect(() => {
    run(async () => {
      const q = Object.fromEntries(['state', 'code', 'error', 'error_description', 'iss'].filter((k) => query.has(k)).map((k) => [k, query.get(k)!]));
      const pending = takePendingStepUp();
      const data = await api.call('A01', { params: { provider }, query: q });
      if (pending && 'proof_token' in data) resumeWithProof(pending, data.proof_token);
      else if ('action' in data && data.action === 'bind') setBound(true);
      else finishLogin(data, setChallenge);
    });
  }, []);
  if (challenge) return <SecondStep challenge={challenge} />;
  return (
    <section class="card">
      {bound ? <Notice>{t('oauth_bound', { provider })}</Notice> : !error && <p>{t('oauth_working')}</p>}
      <ErrorBox error={error} />
      <p>
        <Link to={bound ? '/' : '/login'}>{bound ? t('security') : t('login')}</Link>
      </p>
    </section>
  );
}

