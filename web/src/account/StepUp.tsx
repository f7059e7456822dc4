// Step-up verification (A48 methods → A47 code/password, A39/A40 passkey, or A05/A01 through a linked
// provider) for one scope: the proof it yields is sent as X-Security-Proof with the protected request.
import { useEffect, useState } from 'preact/hooks';
import { Dialog, ErrorBox, Field, Select, navigate, useAction } from '../shared/ui';
import { api } from './session';
import { t } from './texts';
import { passwordFields } from './Login';
import { getAssertion } from './webauthn';

type Context = Record<string, unknown> | undefined;

interface Ask {
  scope: string;
  context?: Context;
  /** Names the action to run again after a provider redirect (`oauth` method); without it there is no resume. */
  action?: string;
  resolve: (proof: string | null) => void;
}

/** sessionStorage key of the step-up waiting for the provider's redirect: scope, context, action, page. */
const PENDING = 'stepup_pending';
type Pending = { scope: string; context?: Context; action?: string; path: string };

/** A proof from the provider's redirect, kept in memory until the action that asked for it runs again. */
let resumed: (Pending & { proof: string }) | null = null;
const sameAsk = (p: Pending, scope: string, context: Context) => p.scope === scope && JSON.stringify(p.context ?? {}) === JSON.stringify(context ?? {});

/** The step-up waiting for the provider (A05 intent verify), if this tab started one; forgotten once read. */
export function takePendingStepUp(): Pending | null {
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  return raw ? JSON.parse(raw) : null;
}

/** A01 answered the verify flow with a proof: back to the page that asked, which runs its action again. */
export function resumeWithProof(pending: Pending, proof: string) {
  resumed = { ...pending, proof };
  navigate(pending.path);
}

/** Runs `f(context)` once when this page was reopened after a provider verification for `action`. */
export function useResume(action: string, f: (context: Context) => void) {
  useEffect(() => {
    if (resumed?.action === action) f(resumed.context);
  }, []);
}

function StepUpDialog({ ask, done }: { ask: Ask; done: (proof: string | null) => void }) {
  const [methods, setMethods] = useState<Array<{ method: string; available: boolean; reason?: string }> | null>(null);
  const [providers, setProviders] = useState<Array<{ slug: string; name: string }>>([]);
  const [method, setMethod] = useState('');
  const [provider, setProvider] = useState('');
  const [secret, setSecret] = useState('');
  const { busy, error, run } = useAction();
  useEffect(() => {
    run(async () => {
      const d = await api.call('A48', { query: { scope: ask.scope } });
      // The `oauth` method leaves the page: offered only when the action can be resumed afterwards.
      const list = (d.methods ?? []).filter((m: any) => m.method !== 'oauth' || ask.action);
      setMethods(list);
      setProviders(d.oauth_providers ?? []);
      setProvider(d.oauth_providers?.[0]?.slug ?? '');
      setMethod(list.find((m: any) => m.available)?.method ?? '');
    });
  }, []);
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      let proof: any;
      if (method === 'oauth') {
        const d = await api.call('A05', { body: { provider, intent: 'verify', scope: ask.scope, context: ask.context } });
        const pending: Pending = { scope: ask.scope, context: ask.context, action: ask.action, path: location.pathname + location.search };
        sessionStorage.setItem(PENDING, JSON.stringify(pending));
        return location.assign(d.authorization_url);
      }
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
  const providerName = providers.find((p) => p.slug === provider)?.name ?? provider;
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
        {method === 'oauth' && providers.length > 1 && <Select label={t('m_oauth')} value={provider} onChange={(e) => setProvider(e.currentTarget.value)} options={providers.map((p) => [p.slug, p.name])} />}
        <ErrorBox error={error} />
        <div class="row">
          <button type="submit" disabled={busy || !method || (method === 'oauth' && !provider)}>
            {method === 'oauth' ? t('oauth_stepup', { name: providerName }) : t('verify')}
          </button>
          <button type="button" class="secondary" onClick={() => done(null)}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * ask(scope, context, action) opens the dialog and resolves with a proof token, or null when cancelled; a
 * proof brought back from the provider for the same scope and context is used at once.
 */
export function useStepUp() {
  const [ask, setAsk] = useState<Ask | null>(null);
  return {
    ask: (scope: string, context?: Context, action?: string) =>
      new Promise<string | null>((resolve) => {
        if (resumed && sameAsk(resumed, scope, context)) {
          const proof = resumed.proof;
          resumed = null;
          return resolve(proof);
        }
        setAsk({ scope, context, action, resolve });
      }),
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

/**
 * Runs a request that needs a proof: step-up first, then the request with X-Security-Proof. `action` names it
 * for a resume after the `oauth` method's redirect (see useResume).
 */
export async function withProof<T>(stepUp: StepUp, scope: string, context: Context, f: (headers: Record<string, string>) => Promise<T>, action?: string) {
  const proof = await stepUp.ask(scope, context, action);
  if (!proof) return undefined;
  return f({ 'x-security-proof': proof });
}
