// A login's second step: the challenge a password, passkey or social login may answer with, and its form (A28–A30).
import { useState } from 'preact/hooks';
import { ErrorBox, Field, navigate, useAction } from '../shared/ui';
import { adopt, api } from './session';
import { t } from './texts';
import { getAssertion } from './webauthn';

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
