// Telegram (A07 → Telegram's login page → A06) and WeChat (A10 with the code, after step-up) binding on the
// security page, offered when the server has them configured and the account is not bound yet.
import { useState } from 'preact/hooks';
import { ErrorBox, Link, Notice, useAction } from '../shared/ui';
import { settings } from './settings';
import { api } from './session';
import { TELEGRAM_BIND_FLOW, telegramUrl, WeChatCodeForm } from './SocialLogin';
import { withProof, type StepUp } from './StepUp';
import { t } from './texts';

export function SocialBinding({ stepUp, bound, onBound }: { stepUp: StepUp; bound: Set<string>; onBound: () => void }) {
  const [wechat, setWechat] = useState(false);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const telegram = settings.telegram && !bound.has('telegram');
  const wechatOpen = settings.wechat && !bound.has('wechat');
  if (!telegram && !wechatOpen) return null;
  const startTelegram = () =>
    run(async () => {
      const flow = await api.call('A07');
      sessionStorage.setItem(TELEGRAM_BIND_FLOW, JSON.stringify({ token: flow.flow_token, expires_at: flow.expires_at }));
      location.assign(telegramUrl(settings.telegram!.bot_id));
    });
  const bindWechat = (code: string) =>
    run(async () => {
      const d = await withProof(stepUp, 'account.binding.bind', { provider: 'wechat', code }, (headers) => api.call('A10', { headers, body: { code } }));
      if (d === undefined) return;
      setWechat(false);
      setNotice(t('oauth_bound', { provider: t('wechat') }));
      onBound();
    });
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
      {wechat && <WeChatCodeForm label={t('bind', { name: t('wechat') })} submit={t('confirm')} busy={busy} onCode={bindWechat} />}
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
