// Telegram (A07 → Telegram's login page → A06) and WeChat (A10 with the code, after step-up) binding on the
// security page, offered when the server has them configured and the account is not bound yet.
import { useState } from 'preact/hooks';
import { ErrorBox, Field, Link, Notice, useAction } from '../shared/ui';
import { settings } from './Login';
import { api } from './session';
import { TELEGRAM_BIND_FLOW, telegramUrl } from './SocialLogin';
import { withProof, type StepUp } from './StepUp';
import { t } from './texts';

export function SocialBinding({ stepUp, bound, onBound }: { stepUp: StepUp; bound: Set<string>; onBound: () => void }) {
  const [wechat, setWechat] = useState(false);
  const [code, setCode] = useState('');
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const telegram = settings.telegram && !bound.has('telegram');
  const wechatOpen = settings.wechat && !bound.has('wechat');
  if (!telegram && !wechatOpen) return null;
  const startTelegram = () =>
    run(async () => {
      const flow = await api.call('A07');
      sessionStorage.setItem(TELEGRAM_BIND_FLOW, flow.flow_token);
      location.assign(telegramUrl(settings.telegram!.bot_id));
    });
  const bindWechat = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const c = code.trim();
      const d = await withProof(stepUp, 'account.binding.bind', { provider: 'wechat', code: c }, (headers) => api.call('A10', { headers, body: { code: c } }));
      if (d === undefined) return;
      setCode('');
      setWechat(false);
      setNotice(t('oauth_bound', { provider: t('wechat') }));
      onBound();
    });
  };
  return (
    <div>
      {notice && <Notice>{notice}</Notice>}
      <div class="row">
        {telegram && (
          <button type="button" class="secondary" disabled={busy} onClick={startTelegram}>
            {t('bind', { name: 'Telegram' })}
          </button>
        )}
        {wechatOpen && (
          <button type="button" class="secondary" aria-expanded={wechat} onClick={() => setWechat(!wechat)}>
            {t('bind', { name: t('wechat') })}
          </button>
        )}
      </div>
      {wechat && (
        <form onSubmit={bindWechat} aria-label={t('bind', { name: t('wechat') })}>
          <p class="muted">{t('wechat_how')}</p>
          <Field label={t('wechat_code')} name="wechat-bind-code" autocomplete="one-time-code" required maxLength={128} value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>
            {t('confirm')}
          </button>
        </form>
      )}
      <ErrorBox error={error} />
    </div>
  );
}

/** /oauth/chatbot: where A06 sends the browser after a Telegram binding, with its result. */
export function TelegramBindResult({ query }: { query: URLSearchParams }) {
  const ok = query.get('telegram_bind') === 'success';
  return (
    <section class="card">
      {ok ? (
        <Notice>{t('oauth_bound', { provider: 'Telegram' })}</Notice>
      ) : (
        <div class="alert" role="alert">
          {t('telegram_bind_failed')}
          <code class="code">{query.get('error_code') ?? 'TELEGRAM_BIND_FAILED'}</code>
        </div>
      )}
      <p>
        <Link to="/">{t('security')}</Link>
      </p>
    </section>
  );
}
