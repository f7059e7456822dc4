// Step-up verification (A48 methods → A47 code/password, or A39/A40 passkey) for one scope: the proof
// it yields is sent as X-Security-Proof with the protected request.
import { useEffect, useState } from 'preact/hooks';
import { Dialog, ErrorBox, Field, useAction } from '../shared/ui';
import { api } from './session';
import { t } from './texts';
import { passwordFields } from './Login';
import { getAssertion } from './webauthn';

interface Ask {
  scope: string;
  context?: Record<string, unknown>;
  resolve: (proof: string | null) => void;
}

function StepUpDialog({ ask, done }: { ask: Ask; done: (proof: string | null) => void }) {
  const [methods, setMethods] = useState<Array<{ method: string; available: boolean; reason?: string }> | null>(null);
  const [method, setMethod] = useState('');
  const [secret, setSecret] = useState('');
  const { busy, error, run } = useAction();
  useEffect(() => {
    run(async () => {
      const d = await api.call('A48', { query: { scope: ask.scope } });
      const list = (d.methods ?? []).filter((m: any) => m.method !== 'oauth');
      setMethods(list);
      setMethod(list.find((m: any) => m.available)?.method ?? '');
    });
  }, []);
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      let proof: any;
      if (method === 'passkey') {
        const begin = await api.call('A39', { body: { scope: ask.scope, context: ask.context } });
        proof = await api.call('A40', { body: { flow_token: begin.flow_token, credential: await getAssertion(begin.options) } });
      } else if (method === 'password') {
        proof = await api.call('A47', { body: { method, scope: ask.scope, context: ask.context, ...(await passwordFields(secret)) } });
      } else {
        proof = await api.call('A47', { body: { method, scope: ask.scope, context: ask.context, code: secret.trim() } });
      }
      done(proof.proof_token);
    });
  };
  return (
    <Dialog title={t('stepup_title')} onClose={() => done(null)}>
      <p class="muted">{t('stepup_why', { scope: ask.scope })}</p>
      <form onSubmit={submit}>
        {methods && (
          <fieldset>
            <legend>{t('method')}</legend>
            {methods.map((m) => (
              <label class="row">
                <input type="radio" name="method" value={m.method} disabled={!m.available} checked={method === m.method} onChange={() => setMethod(m.method)} />
                {t(`m_${m.method}`)} {m.reason && <span class="muted">({m.reason})</span>}
              </label>
            ))}
          </fieldset>
        )}
        {method === '2fa' && <Field label={t('m_2fa')} name="stepup-code" autocomplete="one-time-code" required value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />}
        {method === 'password' && <Field label={t('password')} name="stepup-password" type="password" autocomplete="current-password" required value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />}
        <ErrorBox error={error} />
        <div class="row">
          <button type="submit" disabled={busy || !method}>
            {t('verify')}
          </button>
          <button type="button" class="secondary" onClick={() => done(null)}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** ask(scope, context) opens the dialog and resolves with a proof token, or null when cancelled. */
export function useStepUp() {
  const [ask, setAsk] = useState<Ask | null>(null);
  return {
    ask: (scope: string, context?: Record<string, unknown>) => new Promise<string | null>((resolve) => setAsk({ scope, context, resolve })),
    dialog: ask ? (
      <StepUpDialog
        ask={ask}
        done={(p) => {
          setAsk(null);
          ask.resolve(p);
        }}
      />
    ) : null,
  };
}

export type StepUp = ReturnType<typeof useStepUp>;

/** Runs a request that needs a proof: step-up first, then the request with X-Security-Proof. */
export async function withProof<T>(stepUp: StepUp, scope: string, context: Record<string, unknown> | undefined, f: (headers: Record<string, string>) => Promise<T>) {
  const proof = await stepUp.ask(scope, context);
  if (!proof) return undefined;
  return f({ 'x-security-proof': proof });
}
