import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../shared/api';
import { ErrorBox, Field, useAction } from '../shared/ui';
import { api } from './session';
import { t } from './texts';

const NOT_ENROLLED = new Set(['GW_VERIFY_NOT_ENROLLED', 'STAFF_STEP_UP_NOT_ENROLLED']);

/**
 * The step-up before a secret is shown (token issue, TOTP enrollment): the signed-in root's authenticator code
 * becomes a single-use proof (scope StaffSecret) that `withProof` hands to the operation. A root without a
 * second factor is told the command that enrolls it. `before` may stop the submit before the code is spent.
 */
export function StepUpForm(props: { me?: string; submit: string; before?: () => Promise<boolean>; withProof: (proof: string) => Promise<void>; children?: ComponentChildren }) {
  const [code, setCode] = useState('');
  const { busy, error, run } = useAction();
  const onSubmit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      if (props.before && !(await props.before())) return;
      const proof = await api.call('GS01', { body: { code: code.trim(), scope: 'StaffSecret' } });
      await props.withProof(proof.proof_token);
    });
  };
  const notEnrolled = error instanceof ApiError && NOT_ENROLLED.has(error.code);
  return (
    <form onSubmit={onSubmit} class="stepup">
      {props.children}
      <p class="muted">{t('sf_stepup_why')}</p>
      <Field label={t('sf_stepup_code')} name="code" autocomplete="one-time-code" inputMode="numeric" pattern="[0-9 ]*" required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
      {notEnrolled ? (
        <div class="alert" role="alert">
          {t('sf_stepup_not_enrolled', { name: props.me || 'NAME' })}
        </div>
      ) : (
        <ErrorBox error={error} />
      )}
      <button type="submit" disabled={busy}>
        {props.submit}
      </button>
    </form>
  );
}
