import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import '../shared/style.css';
import { CODE, CodeText, ErrorBox, Field, LangSwitch, navigate, useAction, useRoute } from '../shared/ui';
import { useLang } from '../shared/i18n';
import { ThemeSwitch } from '../shared/theme';
import { signIn, signOut, useSignedIn } from './session';
import { t } from './texts';
import { ChannelsPage } from './channels/ChannelsPage';
import { OperationsPage } from './Operations';
import { DeploymentsPage } from './deployments/DeploymentsPage';
import { RelayPage } from './relay/RelayPage';
import { StaffPage } from './staff/StaffPage';
import { AuditPage } from './staff/AuditPage';
import { SettingsPage } from './settings/SettingsPage';
import { EdgePage } from './edge/EdgePage';

function SignIn() {
  const [token, setToken] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      await signIn(token);
      navigate('/');
    });
  };
  return (
    <section class="card" aria-labelledby="signin-title">
      <h2 id="signin-title">{t('sign_in')}</h2>
      <form onSubmit={submit}>
        <Field label={t('token')} hint={<CodeText text={t('token_hint', { command: CODE })} codes={['npm run cli -- token create --staff NAME']} />} name="token" type="password" autocomplete="off" required value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {t('continue')}
        </button>
      </form>
      <ErrorBox error={error} />
    </section>
  );
}

function Tab({ to, label, path }: { to: string; label: string; path: string }) {
  return (
    <a href={to} aria-current={path === to ? 'page' : undefined} onClick={(e) => (e.preventDefault(), navigate(to))}>
      {label}
    </a>
  );
}

function Page({ path }: { path: string }) {
  if (path === '/operations') return <OperationsPage />;
  if (path === '/deployments') return <DeploymentsPage />;
  if (path === '/relay-log') return <RelayPage />;
  if (path === '/staff') return <StaffPage />;
  if (path === '/audit') return <AuditPage />;
  if (path === '/settings') return <SettingsPage />;
  if (path === '/edge') return <EdgePage />;
  return <ChannelsPage />;
}

function App() {
  useLang();
  const signedIn = useSignedIn();
  const { path } = useRoute();
  useEffect(() => {
    document.title = t('title');
  });
  return (
    <>
      <header class="top">
        <h1>{t('title')}</h1>
        <LangSwitch />
        <ThemeSwitch />
        {signedIn && (
          <button type="button" class="secondary" onClick={signOut}>
            {t('sign_out')}
          </button>
        )}
      </header>
      {signedIn && (
        <nav class="tabs" aria-label={t('title')}>
          <Tab to="/" label={t('channels')} path={path} />
          <Tab to="/operations" label={t('operations')} path={path} />
          <Tab to="/deployments" label={t('deployments')} path={path} />
          <Tab to="/relay-log" label={t('rl_title')} path={path} />
          <Tab to="/staff" label={t('sf_tab')} path={path} />
          <Tab to="/audit" label={t('au_tab')} path={path} />
          <Tab to="/settings" label={t('settings')} path={path} />
          <Tab to="/edge" label={t('edge')} path={path} />
        </nav>
      )}
      <main class={signedIn ? '' : 'narrow'}>{!signedIn ? <SignIn /> : <Page path={path} />}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
