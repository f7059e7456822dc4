import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import '../shared/style.css';
import './account.css';
import { LangSwitch, navigate, useRoute } from '../shared/ui';
import { useLang } from '../shared/i18n';
import { ThemeSwitch } from '../shared/theme';
import { logout, restore, useSession } from './session';
import { t } from './texts';
import { LoginPage } from './Login';
import { OAuthCallback, RegisterPage, ResetPage } from './Public';
import { SecurityPage } from './Security';
import { AdminUserPage } from './AdminUser';
import { SessionsPage } from './Sessions';
import { TelegramCallback } from './SocialLogin';
import { TelegramBindResult } from './SocialBinding';
import { KeysPage } from './keys/KeysPage';
import { WalletPage } from './money/WalletPage';
import { PricingPage } from './money/PricingPage';
import { UsagePage } from './usage/UsagePage';
import { PlaygroundPage } from './playground/PlaygroundPage';
import { ProfilePage } from './ProfilePage';
import { CodesPage } from './admin/CodesPage';
import { AdminUsagePage } from './admin/AdminUsagePage';

/** The account role from which the admin pages are shown (the server checks every call itself). */
const ADMIN_ROLE = 10;

function Tab({ to, label, path }: { to: string; label: string; path: string }) {
  return (
    <a href={to} aria-current={path === to ? 'page' : undefined} onClick={(e) => (e.preventDefault(), navigate(to))}>
      {label}
    </a>
  );
}

function App() {
  useLang();
  const session = useSession();
  const { path, query } = useRoute();
  useEffect(() => void restore(), []);
  useEffect(() => {
    document.title = t('title');
  });
  const oauth = /^\/oauth\/([\w.-]+)$/.exec(path);
  const admin = (session.user?.role ?? 0) >= ADMIN_ROLE;
  const publicPage = path === '/login' || path === '/register' || path === '/reset' || path === '/user/reset' || !!oauth;
  useEffect(() => {
    if (!session.ready) return;
    if (!session.token && !publicPage) navigate('/login');
    if (session.token && (path === '/login' || path === '/register')) navigate('/');
  }, [session.ready, session.token, path]);
  let page;
  if (!session.ready) page = <p>{t('loading')}</p>;
  else if (oauth?.[1] === 'telegram') page = <TelegramCallback />;
  else if (oauth?.[1] === 'chatbot') page = <TelegramBindResult query={query} />;
  else if (oauth) page = <OAuthCallback provider={oauth[1]} query={query} />;
  else if (path === '/register') page = <RegisterPage />;
  else if (path === '/reset' || path === '/user/reset') page = <ResetPage query={query} />;
  else if (!session.token) page = <LoginPage />;
  else if (path === '/sessions') page = <SessionsPage />;
  else if (path === '/keys') page = <KeysPage />;
  else if (path === '/wallet') page = <WalletPage />;
  else if (path === '/usage') page = <UsagePage />;
  else if (path === '/pricing') page = <PricingPage />;
  else if (path === '/playground') page = <PlaygroundPage />;
  else if (path === '/profile') page = <ProfilePage />;
  else if (path === '/admin/users' && admin) page = <AdminUserPage />;
  else if (path === '/admin/codes' && admin) page = <CodesPage />;
  else if (path === '/admin/usage' && admin) page = <AdminUsagePage query={query} />;
  else page = <SecurityPage />;
  return (
    <>
      <header class="top">
        <h1>{t('title')}</h1>
        {session.user && <span>{t('signed_in_as', { name: session.user.username })}</span>}
        <LangSwitch />
        <ThemeSwitch />
        {session.token && (
          <button type="button" class="secondary" onClick={() => logout().then(() => navigate('/login'))}>
            {t('logout')}
          </button>
        )}
      </header>
      {session.token && (
        <nav class="tabs" aria-label={t('title')}>
          <Tab to="/keys" label={t('keys')} path={path} />
          <Tab to="/wallet" label={t('wallet')} path={path} />
          <Tab to="/usage" label={t('usage')} path={path} />
          <Tab to="/pricing" label={t('pricing')} path={path} />
          <Tab to="/playground" label={t('playground')} path={path} />
          <Tab to="/profile" label={t('profile')} path={path} />
          <Tab to="/" label={t('security')} path={path} />
          <Tab to="/sessions" label={t('sessions')} path={path} />
          {admin && (
            <>
              <span class="tab-sep" aria-hidden="true" />
              <Tab to="/admin/users" label={t('admin_users')} path={path} />
              <Tab to="/admin/codes" label={t('codes')} path={path} />
              <Tab to="/admin/usage" label={t('all_usage')} path={path} />
            </>
          )}
        </nav>
      )}
      <main class={session.token ? '' : 'narrow'}>{page}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
