import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { CopyButton, Dialog } from '../../shared/ui';
import { StepUpForm } from '../StepUpForm';
import { t } from '../texts';

/**
 * A secret answered once (a developer key, a webhook signing secret): `form` asks what to create, the step-up
 * turns the signed-in root's code into a StaffSecret proof, `create` spends it; the secret is then shown with a
 * copy button until the dialog is closed, and never again.
 */
export function StepUpSecret(props: {
  title: string;
  shownTitle: (owner: string) => string;
  form: ComponentChildren;
  /** Asked before the code is spent (a new owner); false stops the submit. */
  before?: () => Promise<boolean>;
  create: (proof: string) => Promise<{ owner: string; secret: string }>;
  onClose: (created: boolean) => void;
}) {
  const [shown, setShown] = useState<{ owner: string; secret: string } | null>(null);
  return (
    <Dialog title={shown ? props.shownTitle(shown.owner) : props.title} onClose={() => props.onClose(shown !== null)}>
      {shown ? (
        <>
          <p class="muted">{t('edge_secret_once')}</p>
          <pre class="mono revealed" data-testid="edge-secret">
            {shown.secret}
          </pre>
          <p class="row">
            <CopyButton text={shown.secret} label={t('edge_copy')} copied={t('edge_copied')} failed={t('edge_copy_failed')} />
          </p>
        </>
      ) : (
        <StepUpForm submit={props.title} before={props.before} withProof={async (proof) => setShown(await props.create(proof))}>
          {props.form}
        </StepUpForm>
      )}
      <p>
        <button type="button" class="secondary" onClick={() => props.onClose(shown !== null)}>
          {t('edge_close')}
        </button>
      </p>
    </Dialog>
  );
}
