import { useState } from 'preact/hooks';
import type { Operations } from '../../generated/gateway-api';
import { CopyButton, Dialog } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import type { StaffEntry } from './format';
import { StepUpForm } from '../StepUpForm';

type Enrolled = Operations['GS14']['data'];

/** GS14 behind a step-up: a new TOTP secret for a staff member, shown once as a QR code and as text. */
export function TotpDialog(props: { staff: StaffEntry; me: string; onClose: () => void }) {
  const { staff } = props;
  const [enrolled, setEnrolled] = useState<Enrolled | null>(null);
  const enroll = async (proof: string) => {
    setEnrolled(await api.call('GS14', { params: { id: staff.id }, headers: { 'x-security-proof': proof } }));
  };
  return (
    <Dialog title={t('sf_totp_title', { name: staff.name })} onClose={props.onClose}>
      {enrolled ? (
        <div class="secret-once">
          <p role="status">{t('sf_totp_enrolled', { name: staff.name })}</p>
          <p class="muted">{t('sf_totp_hint')}</p>
          <img class="totp-qr" src={enrolled.qr_code_data} alt={t('sf_totp_qr', { name: staff.name })} width={200} height={200} />
          <p>
            {t('sf_totp_secret')}: <code class="mono" data-testid="totp-secret">{enrolled.secret}</code>
          </p>
          <div class="row">
            <CopyButton text={enrolled.secret} label={t('sf_copy_secret')} copied={t('sf_copied')} failed={t('sf_copy_failed')} />
          </div>
          <details>
            <summary>{t('sf_totp_uri')}</summary>
            <p class="mono small">{enrolled.otpauth_uri}</p>
          </details>
        </div>
      ) : (
        <>
          {staff.totp_enrolled && (
            <div class="alert" role="note">
              {t('sf_totp_reenroll_warn', { name: staff.name })}
            </div>
          )}
          <StepUpForm me={props.me} submit={t('sf_totp_enroll')} withProof={enroll} />
        </>
      )}
      <p>
        <button type="button" class="secondary" onClick={props.onClose}>
          {t('close')}
        </button>
      </p>
    </Dialog>
  );
}
