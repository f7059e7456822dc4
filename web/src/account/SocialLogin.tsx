// Telegram and WeChat login (A08, A09), offered when the server has them configured.
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Link, useAction } from '../shared/ui';
import { api } from './session';
import { t } from './texts';
import { finishLogin, SecondStep, type Challenge } from './SecondStep';
import { settings } from './settings';

/**
 * Telegram's login page (oauth.telegram.org) instead of its widget script, which the console's CSP does not
 * load: it returns to /oauth/telegram with the signed fields in the fragment (#tgAuthResult=base64 JSON).
 */
export function telegramUrl(botId: string) {
  const q = new URLSearchParams({ bot_id: botId, origin: location.origin, request_access: 'write', return_to: `${location.origin}/oauth/telegram` });
  return `https://oauth.telegram.org/auth?${q}`;
}

/** sessionStorage key of the A07 flow while the browser is on Telegram's login page: {token, expires_at}. */
export const TELEGRAM_BIND_FLOW = 'telegram_bind_flow';

/** The binding flow this tab started, if any and not expired (an abandoned one must not turn a later login into a binding). */
function takeBindFlow(): string | null {
  const raw = sessionStorage.getItem(TELEGRAM_BIND_FLOW);
  sessionStorage.removeItem(TELEGRAM_BIND_FLOW);
  const flow = raw ? (JSON.parse(raw) as { token: string; expires_at: number }) : null;
  return flow && flow.expires_at * 1000 > Date.now() ? flow.token : null;
}

/** The code the WeChat official account sends, for login (A09) and binding (A10). */
export function WeChatCodeForm({ label, submit, busy, onCode }: { label: string; submit: string; busy: boolean; onCode: (code: string) => void }) {
  const [code, setCode] = useState('');
  return (
    <form onSubmit={(e) => (e.preventDefault(), onCode(code.trim()))} aria-label={label}>
      <p class="muted">{t('wechat_how')}</p>
      <Field label={t('wechat_code')} name="wechat-code" autocomplete="one-time-code" required maxLength={128} value={code} onInput={(e) => setCode(e.currentTarget.value)} />
      <button type="submit" disabled={busy}>
        {submit}
      </button>
    </form>
  );
}

export function SocialButtons({ onChallenge }: { onChallenge: (c: Challenge) => void }) {
  const [wechat, setWechat] = useState(false);
  const { busy, error, run } = useAction();
  if (!settings.telegram && !settings.wechat) return null;
  const login = (code: string) => run(async () => finishLogin(await api.call('A09', { query: { code } }), onChallenge));
  return (
    <div class="oauth">
      {settings.telegram && (
        <button type="button" class="secondary" onClick={() => location.assign(telegramUrl(settings.telegram!.bot_id))}>
          {t('oauth_with', { name: 'Telegram' })}
        </button>
      )}
      {settings.wechat && (
        <button type="button" class="secondary" aria-expanded={wechat} onClick={() => setWechat(!wechat)}>
          {t('oauth_with', { name: t('wechat') })}
        </button>
      )}
      {wechat && <WeChatCodeForm label={t('wechat')} submit={t('login')} busy={busy} onCode={login} />}
      <ErrorBox error={error} />
    </div>
  );
}

/**
 * /oauth/telegram: sends the fields Telegram signed, exactly as they came, to A08 (login) or, when a binding
 * was started on the security page (its flow token kept in sessionStorage), to A06, which redirects to
 * /oauth/chatbot with the result.
 */
export function TelegramCallback() {
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const { error, run } = useAction();
  useEffect(() => {
    run(async () => {
      const raw = new URLSearchParams(location.hash.slice(1)).get('tgAuthResult') ?? '';
      history.replaceState(null, '', location.pathname);
      const fields = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(raw.replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0))));
      const query = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)]));
      const bindFlow = takeBindFlow();
      if (bindFlow) {
        return location.assign(`/api/oauth/chatbot/bind/${encodeURIComponent(bindFlow)}?${new URLSearchParams(query)}`);
      }
      finishLogin(await api.call('A08', { query }), setChallenge);
    });
  }, []);
  if (challenge) return <SecondStep challenge={challenge} />;
  return (
    <section class="card">
      {!error && <p>{t('oauth_working')}</p>}
      <ErrorBox error={error} />
      <p>
        <Link to="/login">{t('login')}</Link>
      </p>
    </section>
  );
}
